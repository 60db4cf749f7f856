package browser

import (
	"context"
	"syscall"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	proto "github.com/chromedp/cdproto/cdp"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/proc"
)

// Ended is what Stop did to a browser dtb launched.
type Ended struct {
	Running        bool // it answered, or processes of it ran, when asked to stop
	Gone           bool // none of its processes remains and its endpoint is silent
	ProfileRemoved bool // its temporary profile was deleted
}

// Stop ends the whole of the own browser b: whatever answers at its endpoint
// (whether or not the recorded PID still runs) is asked to close, then every
// process of its group and profile is signalled until none remains. The
// temporary profile goes only once the browser is gone.
func Stop(ctx context.Context, b *BrowserInfo) Ended {
	var e Ended
	if Answers(ctx, b) {
		e.Running = true
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if c, err := cdp.Dial(cctx, b.WebSocket, nil); err == nil {
			proto.Call(cctx, c.Target(""), cdpbrowser.Close, proto.Empty{})
			c.Close()
		}
		cancel()
	} else {
		e.Running = len(b.procs()) > 0
	}
	// Never delete the profile of a browser that still runs.
	e.Gone = EndProcesses(b, 5*time.Second) && !Answers(ctx, b)
	if e.Gone && b.TempProfile && b.ProfileDir != "" {
		e.ProfileRemoved = RemoveProfile(b.ProfileDir) == nil
	}
	return e
}

// group is the process group dtb started b in.
func (b *BrowserInfo) group() int {
	if b.Group != 0 {
		return b.Group
	}
	return b.PID // state from before Group: the PID led the group
}

// procs are the live processes of the own browser b: its process group and
// every process naming its profile (without /proc: its own PID, if it runs).
func (b *BrowserInfo) procs() []int {
	pids, ok := browserProcs(b.group(), b.ProfileDir)
	if !ok {
		if proc.Alive(b.PID) && processIs(b.PID, b.ProfileDir) {
			return []int{b.PID}
		}
		return nil
	}
	return pids
}

// EndProcesses waits grace for the own browser b's processes to exit, then
// sends them SIGTERM, then SIGKILL, until none remains. It reports whether
// none remains.
func EndProcesses(b *BrowserInfo, grace time.Duration) bool {
	group := b.group()
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{0, grace}, {syscall.SIGTERM, 3 * time.Second}, {syscall.SIGKILL, 2 * time.Second}} {
		deadline := time.Now().Add(step.wait)
		for {
			pids := b.procs()
			if len(pids) == 0 {
				return true
			}
			if step.sig != 0 {
				signalProcs(pids, step.sig) // again each round: a helper started meanwhile too
				if _, ok := browserProcs(group, b.ProfileDir); !ok {
					KillGroup(group, step.sig)
				}
			}
			if !time.Now().Before(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return len(b.procs()) == 0
}

// CleanupDead ends what is left of the session's own browser once it no
// longer answers (a browser hung, or its processes outliving a killed
// launcher), so nothing of it stays orphaned, and removes its temporary
// profile. A browser that still answers is left alone, profile and all.
func CleanupDead(ctx context.Context, b *BrowserInfo) {
	if b == nil || b.Attached || Answers(ctx, b) {
		return
	}
	if EndProcesses(b, 0) && b.TempProfile && b.ProfileDir != "" {
		RemoveProfile(b.ProfileDir)
	}
}
