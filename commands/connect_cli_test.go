package commands

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestConnectTimeoutCLI: an endpoint that accepts connections and never
// answers holds a command for --connect-timeout, not for its whole --timeout
// (60 s here), whether it is attached with --cdp (http, ws, a port) or
// diagnosed by dtb status.
func TestConnectTimeoutCLI(t *testing.T) {
	e := newCLI(t)
	addr := browsertest.BlackHole(t)
	port := addr[strings.LastIndex(addr, ":")+1:]
	for _, cdp := range []string{"http://" + addr, port, "ws://" + addr + "/devtools/browser/x"} {
		r := e.Run(t, "eval", "1", "--cdp", cdp, "--connect-timeout", "1s", "--session", "hung", "--timeout", "60s")
		if r.Code != 5 || r.Elapsed > 20*time.Second {
			t.Fatalf("--cdp %s: exit %d after %s, want 5 within --connect-timeout: %s", cdp, r.Code, r.Elapsed, r.Stderr)
		}
	}
	r := e.Run(t, "status", "--cdp", addr, "--connect-timeout", "1s", "--session", "hung", "--timeout", "60s")
	r.Exit(t, 0)
	if !strings.Contains(r.Stdout, `"connected":false`) || r.Elapsed > 20*time.Second {
		t.Fatalf("status after %s: %s", r.Elapsed, r.Stdout)
	}
	if !strings.Contains(r.Stdout, "connect-timeout") {
		t.Fatalf("the diagnostics do not name --connect-timeout: %s", r.Stdout)
	}
}

// TestCleartextCDPWarning: a plain http:// or ws:// --cdp (or a bare
// host:port) to a host that is not loopback warns insecure-cdp on stderr,
// loopback and TLS endpoints do not. 192.0.2.1 is TEST-NET: nothing answers.
func TestCleartextCDPWarning(t *testing.T) {
	e := newCLI(t)
	for cdp, want := range map[string]bool{
		"http://192.0.2.1:9222":                   true,
		"ws://192.0.2.1:9222/devtools/browser/x":  true,
		"192.0.2.1:9222":                          true,
		"https://192.0.2.1:9222":                  false,
		"wss://192.0.2.1:9222/devtools/browser/x": false,
		"http://127.0.0.1:1":                      false,
		"http://localhost:1":                      false,
		"1":                                       false,
	} {
		r := e.Run(t, "status", "--cdp", cdp, "--connect-timeout", "500ms", "--session", "remote")
		if got := slices.Contains(r.Warnings(), "insecure-cdp"); got != want {
			t.Errorf("--cdp %s: insecure-cdp warning %v, want %v: %s", cdp, got, want, r.Stderr)
		}
		if strings.Contains(r.Stdout, "insecure-cdp") {
			t.Errorf("--cdp %s: the warning reached stdout", cdp)
		}
	}
}
