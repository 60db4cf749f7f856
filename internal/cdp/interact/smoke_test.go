package interact

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	tab := newTab(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := tab.Navigate(ctx, fixtureURL("probe.html?other="+otherURL), "load"); err != nil {
		t.Fatal(err)
	}
	p := New(tab, tab.ID)
	defer p.Close()
	for _, loc := range []Locator{{CSS: "#b1", Nth: NoNth}, {Role: "button", Name: "Shadow", Nth: NoNth}, {Text: "Frame button", Nth: 0}, {Text: "Frame button", Nth: 1}, {Role: "button", Nth: NoNth}} {
		t0 := time.Now()
		r, err := p.Click(ctx, loc, ClickOptions{Settle: DefaultSettle})
		b, _ := json.Marshal(r)
		t.Logf("%s: %v %s (%v)", loc, err, b, time.Since(t0))
	}
}
