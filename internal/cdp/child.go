package cdp

// Child is the tab's flattened child session sessionID, such as an
// out-of-process iframe that auto-attach attached (see AttachOOPIFs), as a
// Page on the tab's own connection: calls, events and evaluations go to that
// session, and a torn-down error names the tab. Child("") is the page itself.
// A child needs no Close: its session ends with the tab's connection, or when
// it is detached (Target.detachFromTarget, or auto-attach turned off).
func (p *Page) Child(sessionID string) *Page {
	if sessionID == "" {
		return p
	}
	return &Page{ID: p.ID, conn: p.conn, sessionID: sessionID}
}

// NewPage is a Page for tab id on c: over the tab's own websocket when
// sessionID is "" (closing the Page closes c), else the flattened session
// sessionID over a browser connection (closing it detaches that session).
func NewPage(c *Conn, id, sessionID string) *Page {
	return &Page{ID: id, conn: c, sessionID: sessionID, ownConn: sessionID == ""}
}
