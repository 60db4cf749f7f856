package cdp

import (
	"cmp"
	"context"
	"net/http"
	"sync"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
)

// ConnPool keeps websockets open between commands. Only the session host
// (internal/host) sets one; a short-lived dtb process dials and closes as
// before. Get hands a connection to one command at a time (two commands on
// one tab get two connections, so neither sees the other's domain state);
// Put takes it back when the command detaches.
type ConnPool interface {
	Get(ctx context.Context, wsURL string, header http.Header, dial func(context.Context) (*Conn, error)) (*Conn, error)
	Put(c *Conn)
}

// Pool is the process's connection pool, nil outside the session host.
var Pool ConnPool

// DialPooled is a connection to wsURL from Pool when there is one, else
// dial's.
func DialPooled(ctx context.Context, wsURL string, header http.Header, dial func(context.Context) (*Conn, error)) (*Conn, error) {
	if Pool == nil {
		return dial(ctx)
	}
	c, err := Pool.Get(ctx, wsURL, header, dial)
	if err != nil {
		return nil, err
	}
	c.pooled = true
	return c, nil
}

// Release ends a command's use of c: back to the pool when it came from
// there, else closed.
func (c *Conn) Release() error {
	if c.pooled && Pool != nil {
		Pool.Put(c)
		return nil
	}
	return c.Close()
}

// Hold keeps c from going back to the pool (Release) until release is
// called: work of a command that goes on after it answered (an action's
// settle) holds the tab's connection, and the next command on the tab waits
// for it (the pool's Get).
func (p *Page) Hold() (release func()) {
	p.conn.holds.Add(1)
	var once sync.Once
	return func() { once.Do(func() { p.conn.holds.Done() }) }
}

// Memo is a value that a command left for later ones on the same kept
// connection and tab session (SetMemo): the tab's document object, which
// saves each command a round trip. Every memo is forgotten when the tab's
// document may have changed (a frame navigated, a document was opened, the
// page's contexts were cleared: see forgetOn) and when a command that
// enabled Runtime ends (its disable drops the objects handed out).
func (p *Page) Memo(key string) (string, bool) {
	if !p.Kept() {
		return "", false
	}
	p.conn.memoMu.Lock()
	defer p.conn.memoMu.Unlock()
	v, ok := p.conn.memo[p.sessionID+"\x00"+key]
	return v, ok
}

// MemoGen is the connection's memo generation: take it before asking the
// tab for what SetMemo keeps.
func (p *Page) MemoGen() uint64 {
	p.conn.memoMu.Lock()
	defer p.conn.memoMu.Unlock()
	return p.conn.memoGen
}

// SetMemo keeps v under key when no memo was forgotten since gen (the value
// may be of a document that has gone since). Nothing is kept on a
// connection dialed for one command.
func (p *Page) SetMemo(key, v string, gen uint64) {
	if !p.Kept() {
		return
	}
	p.conn.memoMu.Lock()
	defer p.conn.memoMu.Unlock()
	if p.conn.memoGen == gen {
		if p.conn.memo == nil {
			p.conn.memo = map[string]string{}
		}
		p.conn.memo[p.sessionID+"\x00"+key] = v
	}
}

// ForgetMemo drops key (it proved stale).
func (p *Page) ForgetMemo(key string) {
	p.conn.memoMu.Lock()
	defer p.conn.memoMu.Unlock()
	delete(p.conn.memo, p.sessionID+"\x00"+key)
}

// forgetMemos drops every memo of the connection.
func (c *Conn) forgetMemos() {
	c.memoMu.Lock()
	defer c.memoMu.Unlock()
	c.memoGen++
	clear(c.memo)
}

// forgetOn: the events after which a tab's document object may be another's.
var forgetOn = map[string]bool{
	page.FrameNavigated.Method:               true,
	page.DocumentOpened.Method:               true,
	runtime.ExecutionContextsCleared.Method:  true,
	runtime.ExecutionContextDestroyed.Method: true,
	inspector.Detached.Method:                true,
	target.DetachedFromTarget.Method:         true,
}

// WaitHolds returns once every Hold on c is released.
func (c *Conn) WaitHolds() { c.holds.Wait() }

// Kept reports whether the tab's connection outlives the command (the
// session host holds it): a dialog left open then stays open for a later
// command to answer, instead of being dismissed when dtb detaches.
func (p *Page) Kept() bool { return p.conn.pooled && Pool != nil }

// ResetForReuse makes c as a later command expects a fresh connection: no
// subscription of an earlier command is left queueing events, no message
// limit, and Runtime and Log disabled so that their next enable replays the
// page's contexts, console messages and log entries as on a new connection.
// The Page domain stays enabled: it is what keeps a dialog open for a later
// command. It reports whether c is still usable.
func (c *Conn) ResetForReuse() bool {
	select {
	case <-c.done:
		return false
	default:
	}
	c.maxMessage.Store(0)
	c.mu.Lock()
	for k, ss := range c.subs {
		for _, s := range ss {
			s.stop()
		}
		delete(c.subs, k)
	}
	c.mu.Unlock()
	if c.runtimeOn.Swap(false) {
		c.forgetMemos()
	}
	ctx := context.Background()
	for _, m := range []string{runtime.CommandDisable, log.CommandDisable} {
		if wait, err := c.send(ctx, "", m, nil); err == nil {
			go wait(nil)
		}
	}
	return true
}

// EnablePageNetwork turns on the Page domain and the Network domain (no body
// buffering) at once, as navigations and actions need for their events, and
// reports each one's error. A connection the session host keeps has them from
// an earlier command, and nothing turns them off (ResetForReuse leaves both as
// they are): see OncePerConn.
func (p *Page) EnablePageNetwork(ctx context.Context) (pageErr, netErr error) {
	p.OncePerConn("page+network", func() error {
		netDone := make(chan struct{})
		go func() {
			defer close(netDone)
			_, netErr = proto.Call(ctx, p, network.Enable, NetworkNoBodies())
		}()
		_, pageErr = proto.Call(ctx, p, page.Enable, page.EnableParams{})
		<-netDone
		return cmp.Or(pageErr, netErr)
	})
	if pageErr == nil {
		p.setOnConn("page") // WatchDialogs' Page.enable
	}
	return pageErr, netErr
}

// OncePerConn runs setUp once per connection and tab session: what a
// command turns on (a domain, a new-document script) stays on a connection the
// session host keeps for the next one, which then skips the round trips, and
// a script added again would run once more in every later document. A
// connection dialed for one command runs it every time; a failure is not
// remembered.
func (p *Page) OncePerConn(key string, setUp func() error) error {
	k := p.sessionID + "\x00" + key
	if _, ok := p.conn.enabled.Load(k); ok {
		return nil
	}
	if err := setUp(); err != nil {
		return err
	}
	p.setOnConn(key)
	return nil
}

// setOnConn records key as set up on the connection and tab session (see
// OncePerConn): for a set-up that also covers another's.
func (p *Page) setOnConn(key string) { p.conn.enabled.Store(p.sessionID+"\x00"+key, true) }
