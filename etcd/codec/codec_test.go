package codec_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/etcd/codec"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type point struct{ X, Y int }

func TestJSON(t *testing.T) {
	c := codec.JSON[point]()
	data, err := c.Encode(point{1, 2})
	if err != nil || string(data) != `{"X":1,"Y":2}` {
		t.Fatalf("Encode = %s, %v", data, err)
	}
	if p, err := c.Decode(data); err != nil || p != (point{1, 2}) {
		t.Fatalf("Decode = %+v, %v", p, err)
	}
	for _, bad := range []string{`{"X":1}{"X":2}`, `{"X":`, `"text"`, ``} {
		if _, err := c.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) succeeded", bad)
		}
	}
}

func TestString(t *testing.T) {
	c := codec.String()
	data, _ := c.Encode("a b")
	if s, err := c.Decode(data); err != nil || s != "a b" {
		t.Fatalf("round trip = %q, %v", s, err)
	}
}
