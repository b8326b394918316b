package redistest_test

import (
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/internal/redistest"
)

// StartCluster makes one cluster of three masters that owns every slot,
// and a key's node is the one redis-cli gave its slot.
func TestStartCluster(t *testing.T) {
	c := redistest.StartCluster(t)
	if len(c.Nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(c.Nodes))
	}
	for _, s := range c.Nodes {
		info, err := redistest.Command(s.Addr(), "CLUSTER", "INFO")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"cluster_state:ok", "cluster_slots_assigned:16384", "cluster_known_nodes:3", "cluster_size:3"} {
			if !strings.Contains(info, want+"\r\n") {
				t.Errorf("CLUSTER INFO at %s lacks %s:\n%s", s.Addr(), want, info)
			}
		}
	}
	// Slot 15495 ("a") is in the third range, 10923-16383.
	if got, err := redistest.Command(c.Nodes[0].Addr(), "CLUSTER", "KEYSLOT", "a"); err != nil || got != "15495" {
		t.Fatalf("CLUSTER KEYSLOT a = %q, %v; want 15495", got, err)
	}
	_, err := redistest.Command(c.Nodes[0].Addr(), "SET", "a", "1")
	if want := "MOVED 15495 " + c.Nodes[2].Addr(); err == nil || err.Error() != want {
		t.Fatalf("SET a at the first node: %v, want error %q", err, want)
	}
	if got, err := redistest.Command(c.Nodes[2].Addr(), "SET", "a", "1"); err != nil || got != "OK" {
		t.Fatalf("SET a at the third node: %q, %v", got, err)
	}
}
