package relay

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// snap is one stored snapshot; it is never modified after it is stored, so a
// response can render it without holding the lock.
type snap struct {
	body       object
	extensions object // the §4.6 projection, computed once per snapshot
	at         int64
	order      int64 // st.touches when stored: orders snapshots of the same ms
	reporterID any   // string, or nil when the check-in carried no string reporterId
	pub        any   // its page's public name (publicID), or nil like reporterID
}

// slot is what the relay knows of one page (one reporterId; id-less pages share
// "anonymous").
type slot struct {
	id         string
	pub        string // the name callers see (publicID), never id
	seenAt     int64  // arrival of its last check-in, or the answer to a held one
	held       int    // check-ins of this page being held open right now
	order      int64  // when it was last touched, in touches (ms can tie)
	instanceID any    // last string instanceId it sent (sticky), or nil
	allowRun   bool
	snap       *snap
	// tickAt is the arrival of its last result-less check-in: those are sent by the
	// page's poll timer, so they give the phase of its ticks.
	tickAt int64
	// gone: its held check-in was dropped before it was answered (the tab closed
	// or navigated away), so it is not on the line, whatever seenAt says, until
	// it checks in again.
	gone   bool
	goneAt int64
	// arrivedAt: its last check-in's arrival; supersededAt: when a new reporter of
	// its instance first checked in (a reload or a hot reload replaced it, or
	// another tab opened).
	arrivedAt, supersededAt int64
	// arrived is closed (and replaced) when its next check-in arrives; nil until
	// someone waits for one.
	arrived chan struct{}
}

type command struct {
	token    string
	id       string
	input    any
	hasInput bool
	size     int    // bytes of its pending entry in an answer: what handing it out costs
	target   string // reporter id the command is for; "" = whichever checks in
	shown    string // the name its caller gave the page (public or raw); "" = untargeted
	postedAt int64
	// handed: it went out in the answer to a check-in of pickedBy (written
	// whole to the connection), answer numbering that answer. taken: the page
	// has shown it read that answer, by reporting on a command handed in it.
	// A page can drop an answer it was handed (its reporter stopped in a hot
	// reload, or it gave up reading the answer at its timeout and checks in
	// again as if nothing came), and the spec's reporter sends nothing while it
	// runs a command, so a handed command is not known to be picked up until
	// then: callers are told pickedUp only when it is taken.
	handed   bool
	taken    bool
	answer   int64
	pickedBy string
	pickedAt int64
	gen      int // invalidates a deadline timer that fired while being restarted
	timer    *time.Timer
	done     chan reply // buffered: whoever settles never blocks
	// probe: the relay's own refresh probe (probeID), never shown to a caller;
	// fin is closed when it is settled (answered, or expired).
	probe bool
	fin   chan struct{}
}

type reply struct {
	status int
	body   any
}

// hold is a check-in being held open until a command for its page is queued.
type hold struct {
	slot  *slot
	ch    chan []*command // buffered; nil slice = answer with nothing pending
	timer *time.Timer
}

type state struct {
	checkInAt  int64 // last check-in of any page (0: never)
	instanceID any
	allowRun   bool
	latest     *snap // the upstream "one slot": the last snapshot of any page
	slots      map[string]*slot
	byPub      map[string]*slot // the same slots by public name
	queue      []*command       // waiting commands, in POST order
	byToken    map[string]*command
	seq        int64
	answers    int64 // answers that handed a page commands, numbered
	touches    int64
	holds      []*hold // in arrival order
	closing    bool
}

func (st *state) init() {
	st.slots = map[string]*slot{}
	st.byPub = map[string]*slot{}
	st.byToken = map[string]*command{}
}

const (
	maxSlots = 64 // per-page slots kept; the least recently seen idle one goes first
	// The reporter polls every 500 ms by default (spec §3.1) and drops a tick while a
	// check-in is in flight. A hold released just before the next tick lets that tick
	// through; released after it, the page would sit out a whole poll period.
	pagePollMs   = 500
	tickMarginMs = 100
)

func (s *Server) nowMs() int64 { return time.Now().UnixMilli() }

// live: a held check-in is a page on the line, however long ago it arrived, and
// so is a page busy running a command it took.
func (s *Server) live(sl *slot, now int64) bool {
	return sl.held > 0 || (!sl.gone && now-sl.seenAt <= s.staleMs) || s.busyWith(sl) != nil
}

// busyWith is the command sl is running, when it counts as busy: the reporter
// sends nothing while a command runs, so busy is not gone (the command's deadline
// bounds it), unless a new reporter of its instance has checked in since its last
// check-in. Then it was most likely reloaded mid-command, and it is judged by its
// check-ins alone, as upstream (another tab of the same app is judged that way too).
func (s *Server) busyWith(sl *slot) *command {
	if sl.supersededAt > sl.arrivedAt {
		return nil
	}
	return s.running(sl)
}

// untargeted is the snapshot an answer about no page in particular shows: the
// latest among live pages, so a closed tab's state is never served as live while
// another page reports; with none live, the latest of any.
func (s *Server) untargeted(now int64) *snap {
	var best *snap
	for _, sl := range s.state.slots {
		if sl.snap != nil && s.live(sl, now) && (best == nil || sl.snap.order > best.order) {
			best = sl.snap
		}
	}
	return cmp.Or(best, s.state.latest)
}

// running is the command sl took first among those it has not answered (the
// one it is running), or nil. The relay's own probes are not commands.
func (s *Server) running(sl *slot) *command {
	var first *command
	for _, c := range s.state.queue {
		if c.handed && c.pickedBy == sl.id && !c.probe && (first == nil || c.pickedAt < first.pickedAt) {
			first = c
		}
	}
	return first
}

// slotOf is the slot whose snapshot sn is.
func (s *Server) slotOf(sn *snap) *slot {
	if sn == nil {
		return nil
	}
	id, _ := sn.reporterID.(string)
	return s.state.slots[cmp.Or(id, "anonymous")]
}

func (s *Server) connectedAny(now int64) bool { return s.liveReporters(now) > 0 }

func (s *Server) liveReporters(now int64) int {
	n := 0
	for _, sl := range s.state.slots {
		if s.live(sl, now) {
			n++
		}
	}
	return n
}

func iso(ms int64) any {
	if ms == 0 {
		return nil
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// connection is the §4.5 object: of the whole relay when sl is nil, else of one
// page. A per-page answer is never ambiguous: the caller named the page.
// shown is the name a per-page answer gives the page: the one its caller used.
func (s *Server) connection(now int64, sl *slot, shown string) object {
	st := &s.state
	instanceID, allowRun, checkedIn, latest := st.instanceID, st.allowRun, st.checkInAt, s.untargeted(now)
	connected := s.connectedAny(now)
	if sl != nil {
		instanceID, allowRun, checkedIn, latest = sl.instanceID, sl.allowRun, sl.seenAt, sl.snap
		connected = s.live(sl, now)
	}
	reporters := s.liveReporters(now)
	var reportedAt, ageMs, reporterID any
	if latest != nil {
		reportedAt, ageMs, reporterID = iso(latest.at), now-latest.at, latest.pub
		if sl != nil && reporterID != nil {
			reporterID = shown
		}
	}
	conn := object{
		{"instanceId", instanceID},
		{"allowRun", allowRun},
		{"connected", connected},
		{"checkedInAt", iso(checkedIn)},
		{"reportedAt", reportedAt},
		{"ageMs", ageMs},
		{"stale", !connected},
		{"staleMs", s.staleMs},
		{"reporterId", reporterID},
		{"reporters", reporters},
		{"ambiguous", sl == nil && reporters > 1},
	}
	// dtb relay's addition (format: internal/relayclient/busy.go): the page the
	// answer is about is running a command. Absent otherwise, as upstream.
	who := sl
	if who == nil {
		who = s.slotOf(latest)
	}
	if who != nil {
		if c := s.busyWith(who); c != nil {
			conn = append(conn, member{"busy", object{{"commandId", c.id}, {"ageMs", now - c.pickedAt}}})
		}
	}
	return conn
}

// connectionFor is the connection a command's caller is shown: its page's, if it
// named one that is still known.
func (s *Server) connectionFor(c *command, now int64) object {
	if c.target == "" {
		return s.connection(now, nil, "")
	}
	return s.connection(now, s.state.slots[c.target], c.shown)
}

// named is the page a caller's ?reporter= names: by its public name, or by its
// reporterId (a caller that knows the id learns nothing from the answer). A
// public-looking name is never taken as a raw id, so a process that checks in
// under a page's public name cannot be reached by it.
func (s *Server) named(name string) *slot {
	if sl := s.state.byPub[name]; sl != nil {
		return sl
	}
	if isPublicID(name) {
		return nil
	}
	return s.state.slots[name]
}

func (s *Server) slotFor(id string, now int64) *slot {
	st := &s.state
	if sl := st.slots[id]; sl != nil {
		return sl
	}
	if len(st.slots) >= maxSlots {
		var oldest *slot
		for _, sl := range st.slots {
			if sl.held == 0 && (oldest == nil || sl.order < oldest.order) {
				oldest = sl
			}
		}
		if oldest != nil {
			delete(st.slots, oldest.id)
			delete(st.byPub, oldest.pub)
		}
	}
	sl := &slot{id: id, pub: s.publicID(id), seenAt: now}
	st.slots[id] = sl
	st.byPub[sl.pub] = sl
	s.logf("relay: page %s checked in for the first time", quote(sl.pub))
	return sl
}

func (s *Server) touch(sl *slot, now int64) {
	sl.gone = false
	sl.seenAt = max(sl.seenAt, now)
	s.state.touches++
	sl.order = s.state.touches
	s.state.checkInAt = max(s.state.checkInAt, now)
}

// checkIn records an accepted check-in (§4.7 steps 6–8) and returns what to hand
// out now, or a hold to wait on when there is nothing.
func (s *Server) checkIn(body object) ([]*command, *hold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.state
	now := s.nowMs()

	id := "anonymous"
	var reporterID any
	if v, _ := body.get("reporterId"); v != nil {
		if str, ok := v.(string); ok {
			id, reporterID = str, str
		}
	}
	_, known := st.slots[id]
	sl := s.slotFor(id, now)
	s.touch(sl, now)
	sl.arrivedAt = now
	if sl.arrived != nil {
		close(sl.arrived)
		sl.arrived = nil
	}
	allowRun := false
	if v, _ := body.get("allowRun"); v == true {
		allowRun = true
	}
	st.allowRun, sl.allowRun = allowRun, allowRun
	if v, _ := body.get("instanceId"); v != nil {
		if str, ok := v.(string); ok {
			st.instanceID, sl.instanceID = str, str
		}
	}
	if !known && sl.instanceID != nil {
		s.releaseSuperseded(sl, now)
	}
	if v, _ := body.get("snapshot"); v != nil {
		if o, ok := v.(object); ok {
			sn := &snap{body: o, extensions: projectExtensions(o), at: now, order: st.touches, reporterID: reporterID}
			if reporterID != nil {
				sn.pub = sl.pub
			}
			st.latest, sl.snap = sn, sn
		}
	}

	rv, _ := body.get("results")
	results, _ := rv.([]any)
	if len(results) == 0 {
		sl.tickAt = now
	}
	delivered := false
	for _, e := range results {
		entry, ok := e.(object)
		if !ok {
			continue
		}
		tv, _ := entry.get("token")
		token, ok := tv.(string)
		if !ok {
			continue
		}
		c := st.byToken[token]
		// Only the page the command was handed to may answer it: a token is a
		// secret between the relay and that page, and a result from anyone else
		// is ignored like an unknown one.
		if c == nil || !c.handed || c.pickedBy != id {
			continue // unknown, repeated, late after a timeout, or not this page's
		}
		delivered = true
		outcome, _ := entry.get("outcome")
		s.settle(c, outcomeReply(c, outcome, cmp.Or(c.shown, sl.pub), now))
		// The page read the answer that handed c, so it has every command in it
		// (the reporter reads an answer's pending list whole, spec §3.6).
		for _, o := range st.queue {
			if o.handed && o.pickedBy == id && o.answer == c.answer {
				o.taken = true
			}
		}
	}
	// §4.12: a page that delivers a result is making progress, so the commands it
	// still holds get a fresh deadline rather than timing out behind a slow one.
	if delivered {
		for _, c := range st.queue {
			if c.handed && c.pickedBy == id {
				s.arm(c)
			}
		}
	}

	if pending := s.take(sl); len(pending) > 0 {
		return pending, nil
	}
	d := s.holdFor(sl, len(results) == 0, now)
	if d <= 0 {
		return nil, nil
	}
	h := &hold{slot: sl, ch: make(chan []*command, 1)}
	h.timer = time.AfterFunc(time.Duration(d)*time.Millisecond, func() { s.releaseHold(h) })
	st.holds = append(st.holds, h)
	sl.held++
	return nil, h
}

// holdFor is how long to hold a check-in of sl that found nothing to pick up.
func (s *Server) holdFor(sl *slot, tickDriven bool, now int64) int64 {
	if s.longPollMs == 0 || s.state.closing || s.busy(sl) {
		return 0
	}
	limit := alignedHold(s.longPollMs)
	if tickDriven {
		return limit
	}
	// A follow-up carrying results, with nothing else to run: hold it until just
	// before the page's next tick, so a command sent straight after this result
	// (the next line of a script) rides on it instead of waiting a poll period.
	if sl.tickAt == 0 {
		return 0
	}
	since := now - sl.tickAt
	next := sl.tickAt + ((since+tickMarginMs)/pagePollMs+1)*pagePollMs
	return min(next-tickMarginMs-now, limit)
}

// busy: the page was handed commands it has not reported on, so it is working
// through a batch (one by one, each after the previous follow-up's answer), and a
// check-in of its must be answered at once or the batch stalls.
func (s *Server) busy(sl *slot) bool {
	for _, c := range s.state.queue {
		if c.handed && c.pickedBy == sl.id {
			return true
		}
	}
	return false
}

// alignedHold trims a hold so it ends tickMarginMs before a multiple of the page's
// poll period after the check-in arrived: e.g. 2000 → 1900.
func alignedHold(limit int64) int64 {
	k := (limit + tickMarginMs) / pagePollMs
	if k == 0 {
		return limit
	}
	return k*pagePollMs - tickMarginMs
}

// take marks and returns the unpicked commands sl may run, in queue order, as
// many as fit in maxBody bytes of input (at least one): the page must read the
// answer within its check-in timeout, and a batch handed at once that it cannot
// read is a batch it never took. The rest ride its next check-ins (the follow-ups
// of these). While closing nothing is handed out.
func (s *Server) take(sl *slot) []*command {
	if s.state.closing {
		return nil
	}
	var out []*command
	bytes := 0
	answer := s.state.answers + 1
	for _, c := range s.state.queue {
		if !c.handed && (c.target == "" || c.target == sl.id) {
			if len(out) > 0 && bytes+c.size > maxBody {
				break
			}
			bytes += c.size
			c.handed, c.taken, c.answer, c.pickedBy, c.pickedAt = true, false, answer, sl.id, s.nowMs()
			s.arm(c) // §4.12: the deadline restarts at pickup
			out = append(out, c)
		}
	}
	if len(out) > 0 {
		s.state.answers = answer
	}
	return out
}

// dispatch answers held check-ins that now have something to pick up. Untargeted
// commands go to the most recently arrived check-in: after a hot reload of the
// toolbar the old reporter's check-in is still held, and it drops what it gets.
func (s *Server) dispatch(now int64) {
	st := &s.state
	for i := len(st.holds) - 1; i >= 0; i-- {
		if i >= len(st.holds) {
			continue
		}
		h := st.holds[i]
		cmds := s.take(h.slot)
		if len(cmds) == 0 {
			continue
		}
		s.dropHold(i, now, true)
		h.ch <- cmds
	}
}

// releaseSuperseded answers, with nothing, the held check-ins of the other pages
// of sl's toolbar instance when sl checks in for the first time: a new reporter of
// an instance is what a hot reload starts while the old one's check-in is still
// held, and that reporter has stopped. (Another tab of the same app is only asked
// to check in again, which it does at its next tick.) Not counted as contact, so
// a stopped reporter goes stale from its last real check-in.
func (s *Server) releaseSuperseded(sl *slot, now int64) {
	st := &s.state
	for _, o := range st.slots {
		if o != sl && o.instanceID == sl.instanceID {
			o.supersededAt = now
		}
	}
	for i := 0; i < len(st.holds); {
		h := st.holds[i]
		if h.slot == sl || h.slot.instanceID != sl.instanceID {
			i++
			continue
		}
		s.dropHold(i, now, false)
		h.ch <- nil
	}
}

// dropHold ends hold i. Answered (not abandoned), it counts as contact: held until
// now means on the line until now.
func (s *Server) dropHold(i int, now int64, answered bool) {
	st := &s.state
	h := st.holds[i]
	st.holds = append(st.holds[:i], st.holds[i+1:]...)
	h.timer.Stop()
	h.slot.held--
	if answered {
		s.touch(h.slot, now)
	}
}

func (s *Server) holdIndex(h *hold) int {
	for i, x := range s.state.holds {
		if x == h {
			return i
		}
	}
	return -1
}

func (s *Server) releaseHold(h *hold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.holdIndex(h); i >= 0 {
		s.dropHold(i, s.nowMs(), true)
		h.ch <- nil
	}
}

// untake puts back the commands of an answer that did not reach the page (its
// request was gone before the answer was written, or writing it failed): the page
// never took them, so they are not picked up.
func (s *Server) untake(cmds []*command) {
	for _, c := range cmds {
		if s.state.byToken[c.token] == c && c.handed {
			c.handed, c.taken, c.pickedBy = false, false, ""
		}
	}
}

// abandonHold runs when a held page went away before its answer was written: the
// tab closed or navigated. Commands handed to it are put back, because that page
// never saw them; the page is not on the line any more, so the commands that can
// only run there are answered 503 no-page-connected at once (not at their
// deadline), and the others go to a page that is.
func (s *Server) abandonHold(h *hold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowMs()
	if i := s.holdIndex(h); i >= 0 {
		s.dropHold(i, 0, false)
	} else {
		select {
		case cmds := <-h.ch:
			s.untake(cmds)
		default:
			return // answered and written: the page had the answer
		}
	}
	sl := h.slot
	if sl.held > 0 {
		s.dispatch(now)
		return // another check-in of the same page is still on the line
	}
	sl.gone, sl.goneAt = true, now
	s.logf("relay: page %s went away (its held check-in was dropped)", quote(sl.pub))
	anyLive := s.connectedAny(now)
	for i := 0; i < len(s.state.queue); {
		c := s.state.queue[i]
		if !c.handed && (c.target == sl.id || (c.target == "" && !anyLive)) {
			s.settle(c, reply{503, s.goneBody(c, now)})
			continue
		}
		i++
	}
	s.dispatch(now)
}

// goneBody answers a command whose page went away.
func (s *Server) goneBody(c *command, now int64) object {
	if c.target == "" {
		return s.noPage(now, s.connection(now, nil, ""))
	}
	return s.noPageForCommand(c.shown, s.state.slots[c.target], now)
}

// arm (re)starts a command's deadline.
func (s *Server) arm(c *command) {
	c.gen++
	if c.timer != nil {
		c.timer.Stop()
	}
	gen := c.gen
	c.timer = time.AfterFunc(time.Duration(s.timeoutMs)*time.Millisecond, func() { s.expire(c, gen) })
}

func (s *Server) expire(c *command, gen int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.gen != gen || s.state.byToken[c.token] != c {
		return
	}
	now := s.nowMs()
	if c.probe {
		s.settle(c, reply{})
		return
	}
	var msg string
	switch {
	case c.taken:
		msg = fmt.Sprintf("The page picked up %s but did not report a result within %d ms.", quote(c.id), s.timeoutMs)
	case c.handed:
		// The spec's reporter sends nothing while it runs a command, and drops
		// what it was handed once stopped: the relay cannot tell which this is,
		// so it does not claim the page took it.
		msg = fmt.Sprintf("The page was handed %s %d ms ago and has not shown that it received it (it reported on neither it nor any command handed with it): its reporter may have dropped it (a hot reload of the toolbar, a reload of the page, an answer it gave up reading), or it may still be running it.",
			quote(c.id), now-c.pickedAt)
	default:
		msg = fmt.Sprintf("No page picked up %s within %d ms. The bridge polls this route; is the tab open and the reporter running?", quote(c.id), s.timeoutMs)
	}
	body := object{
		{"ok", false},
		{"reason", "timeout"},
		{"message", msg},
		{"pickedUp", c.taken},
	}
	body = append(body, handedOut(c)...)
	body = append(body, object{
		{"waitedMs", now - c.postedAt},
		{"command", c.id},
		{"connection", s.connectionFor(c, now)},
	}...)
	s.settle(c, reply{504, body})
}

// handedOut is dtb relay's addition to an answer saying pickedUp false for a
// command that was handed to a page that never showed it received it: what is
// known, for a caller deciding whether to retry. Absent otherwise, as upstream.
func handedOut(c *command) object {
	if c.handed && !c.taken {
		return object{{"handedOut", true}}
	}
	return nil
}

// settle removes a waiting command and answers its caller.
func (s *Server) settle(c *command, r reply) {
	st := &s.state
	delete(st.byToken, c.token)
	for i, x := range st.queue {
		if x == c {
			st.queue = append(st.queue[:i], st.queue[i+1:]...)
			break
		}
	}
	c.timer.Stop()
	c.done <- r
	if c.probe {
		close(c.fin)
	}
}

// outcomeReply is §4.7 step 7: the page's outcome, then command, ranIn, waitedMs.
func outcomeReply(c *command, outcome any, ranIn string, now int64) reply {
	o, ok := outcome.(object)
	if !ok {
		return reply{502, object{
			{"ok", false},
			{"reason", "no-outcome"},
			{"command", c.id},
			{"ranIn", ranIn},
			{"waitedMs", now - c.postedAt},
		}}
	}
	body := o.clone()
	body.set("command", c.id)
	body.set("ranIn", ranIn)
	body.set("waitedMs", now-c.postedAt)
	return reply{statusFor(o), body}
}

func statusFor(outcome object) int {
	if ok, _ := outcome.get("ok"); ok == true {
		return 200
	}
	reason, _ := outcome.get("reason")
	switch reason {
	case "unknown-command":
		return 404
	case "run-not-allowed":
		return 403
	case "torn-down":
		return 409
	case "threw":
		return 422
	case "result-too-large":
		return 413
	}
	return 502
}

// enqueue is §4.8 steps 3–5: refuse, or queue and hand to a held check-in.
func (s *Server) enqueue(id string, input any, hasInput bool, name string) (*command, *reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.state
	now := s.nowMs()
	if st.closing {
		return nil, &reply{503, serverClosing(0, nil)}
	}
	allowRun, target, shownSlot := st.allowRun, "", (*slot)(nil)
	if name != "" {
		sl := s.named(name)
		if sl == nil || !s.live(sl, now) {
			return nil, &reply{503, s.noPageForCommand(name, sl, now)}
		}
		allowRun, target, shownSlot = sl.allowRun, sl.id, sl
	} else if !s.connectedAny(now) {
		return nil, &reply{503, s.noPage(now, s.connection(now, nil, ""))}
	}
	if !allowRun {
		return nil, &reply{403, object{
			{"ok", false},
			{"reason", "run-not-allowed"},
			{"message", "The connected page's bridge was built with allowRun: false, so it carries no runCommand. Pass `agentBridge({ allowRun: true })` to enable this route."},
			{"connection", s.connection(now, shownSlot, name)},
		}}
	}
	st.seq++
	c := &command{
		token:    newToken(st.seq),
		id:       id,
		input:    input,
		hasInput: hasInput,
		target:   target,
		shown:    name,
		postedAt: now,
		done:     make(chan reply, 1),
	}
	c.size = entryBytes(pendingEntry(c))
	st.queue = append(st.queue, c)
	st.byToken[c.token] = c
	s.arm(c)
	s.dispatch(now)
	return c, nil
}

// pendingEntry is c as a check-in's answer hands it out.
func pendingEntry(c *command) object {
	e := object{{"token", c.token}, {"id", c.id}}
	if c.hasInput {
		e = append(e, member{"input", c.input})
	}
	return e
}

// entryBytes is what e adds to a pickup answer as the page reads it: printed at
// its depth there (answers are pretty-printed, so a compact input can grow
// several times over), with its line break, indent and comma.
func entryBytes(e object) int {
	var b bytes.Buffer
	writeValue(&b, e, 2)
	return b.Len() + len("\n    ,")
}

// serverClosing says whether the page had taken the command: a caller may retry
// one it had not, and must check before retrying one it had. c is nil for a
// command refused at once.
func serverClosing(waited int64, c *command) object {
	pickedUp := c != nil && c.taken
	msg := "The dev server shut down before the page answered. The command was never handed to the page: it did not run, and can be retried."
	if pickedUp {
		msg = "The dev server shut down before the page answered. The page had taken the command and may have run it: check before retrying."
	}
	if c != nil && c.handed && !c.taken {
		msg = "The dev server shut down before the page answered. The command was handed to the page, which has not shown that it received it: it may have dropped it or may be running it; check before retrying."
	}
	body := object{
		{"ok", false},
		{"reason", "server-closing"},
		{"message", msg},
		{"pickedUp", pickedUp},
	}
	if c != nil {
		body = append(body, handedOut(c)...)
	}
	return append(body, member{"waitedMs", waited})
}

// closeAll shuts the routes down in order: nothing more is handed out (commands
// not yet handed out are answered 503 server-closing, pickedUp false, the relay's
// own probes are dropped, and held check-ins are released with nothing), then the
// commands handed to a page get up to grace to report through the still-open
// listener, and whatever is left is answered 503 server-closing, pickedUp true
// when the page had taken it (else false, handedOut true).
func (s *Server) closeAll(grace time.Duration) {
	s.mu.Lock()
	st := &s.state
	st.closing = true
	now := s.nowMs()
	for i := 0; i < len(st.queue); {
		if c := st.queue[i]; !c.handed || c.probe {
			s.settle(c, reply{503, serverClosing(now-c.postedAt, c)})
			continue
		}
		i++
	}
	for len(st.holds) > 0 {
		h := st.holds[0]
		s.dropHold(0, now, true)
		h.ch <- nil
	}
	s.mu.Unlock()

	deadline := time.Now().Add(grace)
	for {
		s.mu.Lock()
		if len(st.queue) == 0 || !time.Now().Before(deadline) {
			now := s.nowMs()
			for len(st.queue) > 0 {
				c := st.queue[0]
				s.settle(c, reply{503, serverClosing(now-c.postedAt, c)})
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
}

// The no-page texts are the upstream relay's, with the configured base and staleMs.
func (s *Server) noPage(now int64, conn object) object {
	msg := "No page has reported to " + s.base + " yet. Open the app with the agent bridge's `report` option pointed at \"" +
		s.base + "/state\" — this middleware cannot call the page."
	if s.state.checkInAt != 0 {
		msg = fmt.Sprintf("The last check-in was %d ms ago, older than staleMs (%d). The tab is probably closed, reloading, or rebuilding.",
			now-s.state.checkInAt, s.staleMs)
		if now-s.state.checkInAt <= s.staleMs && !s.connectedAny(now) {
			msg = "The page went away: its held check-in was dropped (the tab closed, reloaded or navigated away), and no page has checked in since."
		}
	}
	return noPageBody(msg, conn)
}

func noPageBody(msg string, conn object) object {
	return object{
		{"ok", false},
		{"reason", "no-page-connected"},
		{"message", msg},
		{"connection", conn},
	}
}

// unknownReporter answers a ?reporter= that names no known page; reporterIds lists
// the known ones, most recently seen first, since nothing else enumerates them.
func (s *Server) unknownReporter(target string, now int64) object {
	known := make([]*slot, 0, len(s.state.slots))
	for _, sl := range s.state.slots {
		known = append(known, sl)
	}
	sort.Slice(known, func(i, j int) bool { return known[i].order > known[j].order })
	ids := make([]any, len(known))
	for i, sl := range known {
		ids[i] = sl.pub
	}
	body := noPageBody(fmt.Sprintf("No page with reporterId %s has checked in to %s (or it has not for a long time). Known reporters are listed in reporterIds.", quote(target), s.base),
		s.connection(now, nil, ""))
	return append(body, member{"reporterIds", ids})
}

// noPageForCommand answers a command for the page a caller named target (sl, or
// nil when no known page has that name).
func (s *Server) noPageForCommand(target string, sl *slot, now int64) object {
	if sl == nil {
		return s.unknownReporter(target, now)
	}
	if sl.gone && now-sl.seenAt <= s.staleMs {
		return noPageBody(fmt.Sprintf("Reporter %s went away %d ms ago: its held check-in was dropped (the tab closed, reloaded or navigated away).",
			quote(target), now-sl.goneAt), s.connection(now, sl, target))
	}
	return noPageBody(fmt.Sprintf("The last check-in of reporter %s was %d ms ago, older than staleMs (%d). The tab is probably closed, reloading, or rebuilding.",
		quote(target), now-sl.seenAt, s.staleMs), s.connection(now, sl, target))
}

// snapshotFor returns the snapshot a GET answers with and its connection, or the
// 503 body when there is none.
func (s *Server) snapshotFor(target string) (*snap, object, object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowMs()
	if target == "" {
		conn := s.connection(now, nil, "")
		sn := s.untargeted(now)
		if sn == nil {
			return nil, nil, s.noPage(now, conn)
		}
		return sn, conn, nil
	}
	sl := s.named(target)
	if sl == nil {
		return nil, nil, s.unknownReporter(target, now)
	}
	conn := s.connection(now, sl, target)
	if sl.snap == nil {
		return nil, nil, noPageBody(fmt.Sprintf("Reporter %s checked in %d ms ago but has not sent a snapshot yet.", quote(target), now-sl.seenAt), conn)
	}
	return sl.snap, conn, nil
}

// projectExtensions is §4.6: one key per diagnostics entry with a string id, its
// data when status is "ok", else null.
func projectExtensions(snapshot object) object {
	ext := object{}
	dv, _ := snapshot.get("diagnostics")
	diags, _ := dv.([]any)
	for _, d := range diags {
		entry, ok := d.(object)
		if !ok {
			continue
		}
		iv, _ := entry.get("id")
		id, ok := iv.(string)
		if !ok {
			continue
		}
		var data any
		if status, _ := entry.get("status"); status == "ok" {
			data, _ = entry.get("data")
		}
		ext.set(id, data)
	}
	return ext
}

// newToken is a command token: "c<seq>-" and 128 random bits. The reporter treats
// tokens as opaque strings (spec §3.6), and a token is what a check-in must show to
// answer a command, so it must not be guessable (upstream's is c<seq>-<ms>).
func newToken(seq int64) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return fmt.Sprintf("c%d-%s", seq, hex.EncodeToString(b[:]))
}

// quote is the upstream's "${x}": plain quotes, nothing escaped.
func quote(x string) string { return "\"" + x + "\"" }

// probeID is the command a refresh probe asks the page to run. No toolbar has
// it, so the page answers unknown-command at once, and, like after any command,
// sends a fresh snapshot with that answer (spec §3.4): which is what the probe is
// for. The relay swallows the answer.
const probeID = "__dtb_relay__.refresh"

// refresh makes the next snapshot of the page a GET is about the page as of now:
// when that page's check-in is held (it has nothing to do and would send its next
// snapshot only at its next poll, throttled), the relay hands it a probe, and
// waits (up to RefreshMs in all) for the check-in that answers it. A page between
// two check-ins (its next poll is due within a tick) is waited for, then probed.
// A busy page, one gone, or a relay that does not hold check-ins, is answered
// from what is known.
func (s *Server) refresh(ctx context.Context, target string) {
	if s.refreshMs == 0 || s.longPollMs == 0 {
		return
	}
	t := time.NewTimer(time.Duration(s.refreshMs) * time.Millisecond)
	defer t.Stop()
	for {
		wait, final := s.probe(target)
		if wait == nil {
			return
		}
		select {
		case <-wait:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
		if final {
			return
		}
	}
}

// probe hands the held page a probe (or finds the one it has) and returns what
// to wait for: the probe's answer (final), or the page's next check-in (then look
// again); nil when there is nothing to wait for.
func (s *Server) probe(target string) (wait <-chan struct{}, final bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.state
	now := s.nowMs()
	var sl *slot
	if target != "" {
		sl = s.named(target)
	} else {
		sl = s.slotOf(s.untargeted(now))
	}
	if sl == nil || st.closing || !s.live(sl, now) || s.running(sl) != nil {
		return nil, true
	}
	for _, c := range st.queue {
		if c.probe && c.target == sl.id {
			if now-c.postedAt > s.refreshMs {
				return nil, true // a page that does not answer its probe: do not wait again
			}
			return c.fin, true // one probe at a time per page: readers share it
		}
	}
	if sl.held == 0 {
		if sl.arrived == nil {
			sl.arrived = make(chan struct{})
		}
		return sl.arrived, false
	}
	st.seq++
	p := &command{token: newToken(st.seq), id: probeID, target: sl.id, postedAt: now,
		done: make(chan reply, 1), probe: true, fin: make(chan struct{})}
	st.queue = append(st.queue, p)
	st.byToken[p.token] = p
	s.arm(p)
	s.dispatch(now)
	return p.fin, true
}

// publicPrefix starts every public page name; publicID's hash is publicHex hex digits.
const (
	publicPrefix = "p-"
	publicHex    = 20
)

// publicID is the name callers see for a page: a keyed hash of its reporterId
// (the key is random per relay process), never the id itself. The spec's reporter
// cannot carry a credential (its check-ins are credentials: "omit"), so the only
// thing a local process cannot know about a page is its random reporterId: the
// relay keeps it secret, and checking in under the name callers see makes a page
// of its own, never that one. Id-less pages share "anonymous": nothing to keep.
func (s *Server) publicID(raw string) string {
	if raw == "anonymous" {
		return raw
	}
	m := hmac.New(sha256.New, s.idKey[:])
	m.Write([]byte(raw))
	return publicPrefix + hex.EncodeToString(m.Sum(nil))[:publicHex]
}

func isPublicID(name string) bool {
	h, ok := strings.CutPrefix(name, publicPrefix)
	if !ok || len(h) != publicHex {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// undelivered runs when the answer handing cmds to a page could not be written
// (the page gave up on its check-in, e.g. at its timeout): they go back to the
// queue for its next check-in, or any page's.
func (s *Server) undelivered(cmds []*command) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.untake(cmds)
	s.dispatch(s.nowMs())
}
