package mirror

import (
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/runner"
)

func event(typ mvccpb.Event_EventType, key, value string, rev int64) *clientv3.Event {
	return &clientv3.Event{Type: typ, Kv: &mvccpb.KeyValue{Key: []byte(key), Value: []byte(value), ModRevision: rev}}
}

// TestOldEventsIgnored checks that events at or below the revision held
// (a resumed watch repeating itself) change nothing, and that the rest of
// the response is applied.
func TestOldEventsIgnored(t *testing.T) {
	m := New[string, string](nil, "/p/", StringKey, WithCodec(stringCodec{}))
	m.setHeld(10)
	var resp clientv3.WatchResponse
	resp.Header.Revision = 12
	resp.Events = []*clientv3.Event{
		event(mvccpb.PUT, "/p/a", "old", 9),
		event(mvccpb.DELETE, "/p/b", "", 10),
		event(mvccpb.PUT, "/p/c", "new", 11),
	}
	m.apply(resp, runner.Health{})
	if got := m.Output().LoadAll(); len(got) != 1 || got["c"] != "new" {
		t.Fatalf("map %v, want only c=new", got)
	}
	if m.Revision() != 11 {
		t.Errorf("revision %d, want 11", m.Revision())
	}
	st := m.Stats()
	if st.Events != 1 || st.Behind != 1 {
		t.Errorf("stats %+v, want 1 event, 1 revision behind", st)
	}

	// A response made only of repeats publishes nothing.
	rev := m.Output().Revision()
	resp.Events = resp.Events[:2]
	m.apply(resp, runner.Health{})
	if m.Output().Revision() != rev {
		t.Error("a response of old events changed the map")
	}
}

type stringCodec struct{}

func (stringCodec) Encode(v string) ([]byte, error)    { return []byte(v), nil }
func (stringCodec) Decode(data []byte) (string, error) { return string(data), nil }
