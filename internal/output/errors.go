package output

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// Exit codes are API: scripts branch on them. See docs/output.md.
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitNotFound    = 3
	ExitTimeout     = 4
	ExitNotConnect  = 5
	ExitRefused     = 6
	ExitAmbiguous   = 7
	ExitInterrupted = 130
)

// reasonExit maps every stable reason dtb emits to its exit code. A reason that is
// not listed exits 1 ("the action ran and failed").
var reasonExit = map[string]int{
	// 1: the action ran and failed
	"failed":                           ExitFailed, // AsError's reason for an error without one
	"engine-missing":                   ExitFailed, // written by the front (internal/front), which cannot link this package
	"threw":                            ExitFailed,
	"torn-down":                        ExitFailed,
	"navigation-failed":                ExitFailed,
	"no-outcome":                       ExitFailed,
	"middleware-error":                 ExitFailed,
	"relay-error":                      ExitFailed,
	"covered":                          ExitFailed,
	"full-page-screenshot-unavailable": ExitFailed,
	"unsupported-results-page":         ExitFailed,
	"launch-failed":                    ExitFailed,
	"listen-failed":                    ExitFailed,
	"cdp-error":                        ExitFailed,
	"io-error":                         ExitFailed,
	"not-interactable":                 ExitFailed,
	"upload-failed":                    ExitFailed,
	"result-too-large":                 ExitFailed,
	"not-visible":                      ExitFailed,
	"not-stable":                       ExitFailed,
	"not-editable":                     ExitFailed,
	"not-typed":                        ExitFailed,
	"not-checkable":                    ExitFailed,
	"console-errors":                   ExitFailed,
	"network-failures":                 ExitFailed,
	"storage-unavailable":              ExitFailed,
	"storage-failed":                   ExitFailed,
	"cookie-rejected":                  ExitFailed,
	"pdf-unavailable":                  ExitFailed,
	"not-dropped":                      ExitFailed,
	"dialog-stale":                     ExitFailed,
	"no-history-entry":                 ExitNotFound,
	"no-such-key":                      ExitNotFound,
	"no-such-cookie":                   ExitNotFound,
	// 2: usage
	"usage":          ExitUsage,
	"bad-input":      ExitUsage,
	"bad-body":       ExitUsage,
	"bad-command-id": ExitUsage,
	"bad-jq":         ExitUsage,
	"too-many-files": ExitUsage,
	"bad-request":    ExitUsage,
	"unknown-flag":   ExitUsage,
	// 3: not found
	"unknown-command":   ExitNotFound,
	"unknown-route":     ExitNotFound,
	"no-match":          ExitNotFound,
	"no-such-tab":       ExitNotFound,
	"stale-ref":         ExitNotFound,
	"no-such-ref":       ExitNotFound,
	"no-such-file":      ExitNotFound,
	"no-such-workspace": ExitNotFound,
	"no-such-instance":  ExitNotFound,
	"no-such-reporter":  ExitNotFound,
	"no-such-request":   ExitNotFound,
	// 4: timeout
	"timeout":            ExitTimeout,
	"page-busy":          ExitTimeout,
	"page-unresponsive":  ExitTimeout,
	"navigation-pending": ExitTimeout,
	"unauthorized":       ExitNotConnect,
	"no-host":            ExitNotConnect,
	"page-navigating":    ExitFailed,
	// 5: not connected
	"no-page-connected":    ExitNotConnect,
	"relay-unreachable":    ExitNotConnect,
	"not-a-relay":          ExitNotConnect,
	"no-browser":           ExitNotConnect,
	"no-toolbar":           ExitNotConnect,
	"stale":                ExitNotConnect,
	"server-closing":       ExitNotConnect,
	"browser-gone":         ExitNotConnect,
	"host-gone":            ExitNotConnect,
	"too-many-connections": ExitNotConnect,
	// 6: refused
	"run-not-allowed":   ExitRefused,
	"cross-origin":      ExitRefused,
	"non-loopback-host": ExitRefused,
	"path-refused":      ExitRefused,
	"url-refused":       ExitRefused,
	"not-owned":         ExitRefused,
	"protocol-mismatch": ExitRefused,
	"refused":           ExitRefused,
	"session-conflict":  ExitRefused,
	"port-in-use":       ExitRefused,
	"dialog-open":       ExitRefused,
	// 7: ambiguous
	"ambiguous-instance":  ExitAmbiguous,
	"ambiguous-match":     ExitAmbiguous,
	"ambiguous-reporters": ExitAmbiguous,
	"ambiguous-tab":       ExitAmbiguous,
	"ambiguous-relay":     ExitAmbiguous,
	"wrong-reporter":      ExitAmbiguous,
	// 130
	"interrupted": ExitInterrupted,
}

// ExitCodeFor returns the exit code of a reason (1 when the reason is not listed).
func ExitCodeFor(reason string) int {
	if c, ok := reasonExit[reason]; ok {
		return c
	}
	return ExitFailed
}

// Reasons lists every known reason with its exit code, sorted by code then name;
// docs/output.md is checked against it.
func Reasons() []ReasonCode {
	out := make([]ReasonCode, 0, len(reasonExit))
	for r, c := range reasonExit {
		out = append(out, ReasonCode{Reason: r, Exit: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Exit != out[j].Exit {
			return out[i].Exit < out[j].Exit
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// ReasonCode pairs a reason with its exit code.
type ReasonCode struct {
	Reason string
	Exit   int
}

// Error is dtb's failure value: a stable kebab-case reason, a human message, optional
// details merged into the error document, and the exit code implied by the reason.
type Error struct {
	Reason  string
	Message string
	Details map[string]any
	// Exit overrides the reason's exit code when non-zero.
	Exit int
	// Cause is the underlying error, kept for errors.Is/As; never printed.
	Cause error
}

func (e *Error) Error() string { return e.Message }

func (e *Error) Unwrap() error { return e.Cause }

// ExitCode is the process exit code for this error.
func (e *Error) ExitCode() int {
	if e.Exit != 0 {
		return e.Exit
	}
	return ExitCodeFor(e.Reason)
}

// With returns the error with one more detail key set (for chaining at creation).
func (e *Error) With(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// Errorf builds an *Error with the given reason.
func Errorf(reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Wrap builds an *Error with the given reason around a cause; the message is
// "<msg>: <cause>" when msg is non-empty.
func Wrap(reason string, cause error, msg string) *Error {
	m := cause.Error()
	if msg != "" {
		m = msg + ": " + m
	}
	return &Error{Reason: reason, Message: m, Cause: cause}
}

// Usage builds a usage error (exit 2).
func Usage(format string, args ...any) *Error { return Errorf("usage", format, args...) }

// BadInput builds a bad-input error (exit 2).
func BadInput(format string, args ...any) *Error { return Errorf("bad-input", format, args...) }

// AsError converts any error into an *Error: an *Error anywhere in the chain is
// returned as is, a context deadline becomes timeout, a cancellation interrupted,
// anything else reason "failed".
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Reason: "timeout", Message: "timed out: " + err.Error(), Cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Reason: "interrupted", Message: "interrupted", Cause: err}
	}
	return &Error{Reason: "failed", Message: err.Error(), Cause: err}
}
