// Package chromeflags holds the command-line flags every browser dtb launches gets.
// It is a leaf package so that the test harness (internal/browsertest) launches
// its browsers exactly like dtb without importing internal/browser.
package chromeflags

// Base are the flags of every launch. Without the networking ones Chromium keeps
// reaching for Google's hosts, which a CI machine without internet refuses.
var Base = []string{
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--remote-debugging-port=0",
}
