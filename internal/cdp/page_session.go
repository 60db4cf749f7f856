package cdp

import (
	"context"
	"errors"

	"github.com/dtb-cli/dtb/internal/output"
)

// CallSession sends a command on a flattened child session of the tab, such as
// an out-of-process iframe attached with Target.setAutoAttach; sessionID ""
// is the tab itself.
func (p *Page) CallSession(ctx context.Context, sessionID, method string, params, result any) error {
	if sessionID == "" {
		return p.Call(ctx, method, params, result)
	}
	err := p.conn.Call(ctx, sessionID, method, params, result)
	if err != nil && errors.Is(err, ErrConnClosed) {
		return output.Wrap("torn-down", err, "the tab went away").With("tab", p.ID)
	}
	return err
}

// SessionEvents subscribes to an event of a child session of the tab ("" is the
// tab itself) until cancel.
func (p *Page) SessionEvents(sessionID, method string) (<-chan Event, func()) {
	if sessionID == "" {
		return p.Events(method)
	}
	return p.conn.Subscribe(sessionID, method)
}
