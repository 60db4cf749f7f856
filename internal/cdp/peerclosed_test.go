package cdp

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// A connection whose peer has gone is seen as such without reading from it,
// while the read loop may still be blocked on it; a live one, idle or with
// unread data, is not.
func TestPeerClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	server := <-accepted
	w := &wsConn{nc: nc, br: bufio.NewReader(nc)}
	blocked := make(chan struct{})
	go func() { // a reader blocked on the socket, as the read loop is
		var b [1]byte
		nc.Read(b[:])
		close(blocked)
	}()
	if w.peerClosed() {
		t.Fatal("an idle live connection seen as closed")
	}
	server.Write([]byte("x"))
	<-blocked
	server.Write([]byte("y")) // unread data
	time.Sleep(20 * time.Millisecond)
	if w.peerClosed() {
		t.Fatal("a live connection with unread data seen as closed")
	}
	var b [1]byte
	nc.Read(b[:])
	server.Close()
	for deadline := time.Now().Add(2 * time.Second); !w.peerClosed(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a connection the peer closed not seen as closed")
		}
	}
}
