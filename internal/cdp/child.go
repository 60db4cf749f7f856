package cdp

// Child is a view of a flattened child session of the tab on the tab's own
// connection: an out-of-process iframe that Target.setAutoAttach (flatten:
// true) attached, for instance. Calls, events and evaluations go to that
// session. The child needs no Close: its session ends with the tab's
// connection, or on Target.detachFromTarget sent through the tab.
func (p *Page) Child(sessionID, targetID string) *Page {
	return &Page{ID: targetID, conn: p.conn, sessionID: sessionID}
}
