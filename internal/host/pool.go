package host

import (
	"context"
	"net/http"
	"path"
	"slices"
	"sync"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/pagedata"
)

// pool keeps the websockets of finished commands for the next command on the
// same target (cdp.ConnPool). A connection serves one command at a time.
type pool struct {
	mu   sync.Mutex
	idle map[string][]*cdp.Conn // by websocket URL
	url  map[*cdp.Conn]string
	used bool // a browser connection was made at least once
	// settling: connections of finished commands whose work goes on (an
	// action's settle, cdp.Page.Hold); a later command on the same target
	// waits for them (settled, closed when the last one is back).
	settling map[*cdp.Conn]string
	settled  map[string]chan struct{}
}

func newPool() *pool {
	return &pool{idle: map[string][]*cdp.Conn{}, url: map[*cdp.Conn]string{},
		settling: map[*cdp.Conn]string{}, settled: map[string]chan struct{}{}}
}

func (p *pool) Get(ctx context.Context, wsURL string, _ http.Header, dial func(context.Context) (*cdp.Conn, error)) (*cdp.Conn, error) {
	// A tab the host uses is recorded from then on (dtb network), before
	// the command that uses it runs.
	pagedata.Recording.Watch(ctx, wsURL, dial)
	// The earlier command's settle ends first: this one must see the page
	// as that one left it.
	for {
		p.mu.Lock()
		ch := p.settled[wsURL]
		p.mu.Unlock()
		if ch == nil {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p.mu.Lock()
	for len(p.idle[wsURL]) > 0 {
		cs := p.idle[wsURL]
		c := cs[len(cs)-1]
		p.idle[wsURL] = cs[:len(cs)-1]
		if c.Ended() {
			delete(p.url, c)
			continue
		}
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.url[c] = wsURL
	p.used = true
	p.mu.Unlock()
	return c, nil
}

// busy reports whether a command holds a connection to the tab tabID (a
// settle going on after its command does not count: no guard of a command
// watches the tab's dialogs then).
func (p *pool) busy(tabID string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, u := range p.url {
		if path.Base(u) == tabID && !slices.Contains(p.idle[u], c) && p.settling[c] == "" {
			return true
		}
	}
	return false
}

// maxIdle bounds the idle connections kept per target: commands run one
// after another on a tab, a few in parallel at most.
const maxIdle = 2

// Put takes c back from a command. The reset runs after the command has
// answered (it writes to the tab, and the CLI is waiting for the exit code),
// and after what still holds c (cdp.Page.Hold), and c is offered to a later
// command only once it is reset. A later command on the same target waits
// for a held c from now on.
func (p *pool) Put(c *cdp.Conn) {
	p.mu.Lock()
	u, ok := p.url[c]
	if ok {
		p.settling[c] = u
		if p.settled[u] == nil {
			p.settled[u] = make(chan struct{})
		}
	}
	p.mu.Unlock()
	go func() {
		c.WaitHolds()
		p.put(c)
		if ok {
			p.settledOne(c, u)
		}
	}()
}

// settledOne ends c's settling; the last one of target u lets the waiting
// commands go.
func (p *pool) settledOne(c *cdp.Conn, u string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.settling, c)
	for _, x := range p.settling {
		if x == u {
			return
		}
	}
	if ch := p.settled[u]; ch != nil {
		close(ch)
		delete(p.settled, u)
	}
}

func (p *pool) put(c *cdp.Conn) {
	p.mu.Lock()
	u, ok := p.url[c]
	p.mu.Unlock()
	if !ok || !c.ResetForReuse() {
		p.drop(c)
		return
	}
	p.mu.Lock()
	keep := len(p.idle[u]) < maxIdle
	if keep {
		p.idle[u] = append(p.idle[u], c)
	} else {
		delete(p.url, c)
	}
	p.mu.Unlock()
	if !keep {
		c.Close()
	}
}

func (p *pool) drop(c *cdp.Conn) {
	p.mu.Lock()
	if u, ok := p.url[c]; ok {
		cs := p.idle[u]
		for i, x := range cs {
			if x == c {
				p.idle[u] = append(cs[:i:i], cs[i+1:]...)
				break
			}
		}
		delete(p.url, c)
	}
	p.mu.Unlock()
	c.Close()
}

// prune forgets connections that ended (their tab closed or the browser
// went away).
func (p *pool) prune() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for u, cs := range p.idle {
		live := cs[:0]
		for _, c := range cs {
			select {
			case <-c.Done():
				delete(p.url, c)
			default:
				live = append(live, c)
			}
		}
		if len(live) == 0 {
			delete(p.idle, u)
		} else {
			p.idle[u] = live
		}
	}
}

func (p *pool) closeAll() {
	p.mu.Lock()
	var all []*cdp.Conn
	for c := range p.url {
		all = append(all, c)
	}
	p.idle, p.url = map[string][]*cdp.Conn{}, map[*cdp.Conn]string{}
	p.mu.Unlock()
	for _, c := range all {
		c.Close()
	}
}

func (p *pool) everUsed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used
}
