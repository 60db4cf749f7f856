package interact

import (
	"strings"
	"testing"
)

// TestRolesAndNamesMatchTheAXTree checks the page-side role and accessible
// name of every element inspect lists against Chromium's own accessibility
// tree (Accessibility.getFullAXTree), node by node.
func TestRolesAndNamesMatchTheAXTree(t *testing.T) {
	for _, fixture := range []string{"app.html", "cards.html"} {
		t.Run(fixture, func(t *testing.T) {
			p, tab, ctx := open(t, fixture)
			ins, err := p.Inspect(ctx, InspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p.Refs = &RefSet{V: 1, Tabs: map[string]*TabRefs{p.TabID(): ins.Refs}}
			var ax struct {
				Nodes []struct {
					Role struct {
						Value string `json:"value"`
					} `json:"role"`
					Name *struct {
						Value string `json:"value"`
					} `json:"name"`
					Ignored bool  `json:"ignored"`
					Backend int64 `json:"backendDOMNodeId"`
				} `json:"nodes"`
			}
			if err := tab.Call(ctx, "Accessibility.getFullAXTree", map[string]any{}, &ax); err != nil {
				t.Fatal(err)
			}
			type an struct{ role, name string }
			byNode := map[int64]an{}
			for _, n := range ax.Nodes {
				if n.Ignored || n.Backend == 0 {
					continue
				}
				a := an{role: n.Role.Value}
				if n.Name != nil {
					a.name = n.Name.Value
				}
				byNode[n.Backend] = a
			}
			checked := 0
			for i, it := range ins.Items {
				ref := ins.Refs.Refs[i]
				if ref[1] != 0 || it.Hidden {
					continue // frames have their own trees; hidden ones none
				}
				_, obj, _, err := p.resolveRef(ctx, it.Ref)
				if err != nil {
					t.Fatalf("%s: %v", it.Ref, err)
				}
				var d struct {
					Node struct {
						Backend int64 `json:"backendNodeId"`
					} `json:"node"`
				}
				if err := tab.Call(ctx, "DOM.describeNode", map[string]any{"objectId": obj}, &d); err != nil {
					t.Fatal(err)
				}
				a, ok := byNode[d.Node.Backend]
				if !ok {
					t.Errorf("%s (%s %q) is not in the AX tree", it.Ref, it.Role, it.Name)
					continue
				}
				if canonRoleGo(a.role) != canonRoleGo(it.Role) {
					t.Errorf("%s %q: role %q, the AX tree says %q", it.Ref, it.Name, it.Role, a.role)
				}
				if strings.Join(strings.Fields(a.name), " ") != it.Name && !(len([]rune(it.Name)) == 80 && strings.HasSuffix(it.Name, "…")) {
					t.Errorf("%s %s: name %q, the AX tree says %q", it.Ref, it.Role, it.Name, a.name)
				}
				checked++
			}
			if checked < 20 {
				t.Fatalf("only %d elements compared", checked)
			}
			tab.Call(ctx, "Accessibility.disable", nil, nil)
		})
	}
}

// canonRoleGo folds Chromium's internal role names onto ARIA ones.
func canonRoleGo(r string) string {
	switch strings.ToLower(r) {
	case "img", "image":
		return "image"
	case "menulistoption", "listboxoption":
		return "option"
	case "disclosuretriangle":
		return "button"
	case "presentation", "none":
		return "none"
	}
	return strings.ToLower(r)
}
