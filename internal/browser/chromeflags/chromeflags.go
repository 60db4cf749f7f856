// Package chromeflags holds the command-line flags every browser dtb launches gets.
// It is a leaf package so that the test harness (internal/browsertest) launches
// its browsers exactly like dtb without importing internal/browser.
package chromeflags

// Base are the flags of every launch. Without the networking ones Chromium keeps
// reaching for Google's hosts, which a CI machine without internet refuses.
//
// --test-type (as ChromeDriver passes it) keeps Chromium from showing its
// "unsupported command-line flag: --no-sandbox" bar in the first tabs: the
// bar comes and goes at startup, so a window measured with it got 56 px too
// much frame and later tabs a viewport that much too tall.
var Base = []string{
	"--no-sandbox",
	"--test-type",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--remote-debugging-port=0",
}
