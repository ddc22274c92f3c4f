package lease_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/integration"
	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube"
	"github.com/switchyard-go/switchyard/kube/lease"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
	"k8s.io/client-go/kubernetes"
)

// The process tests run replicas as child processes, this test binary
// itself (see TestMain), so that a test can kill one with SIGKILL. A child
// writes what it does to its output as lines "<unix nanoseconds> <event>",
// which the test reads from the child's log file.

// say writes one event line.
func say(format string, args ...any) {
	fmt.Printf("%d %s\n", time.Now().UnixNano(), fmt.Sprintf(format, args...))
}

func childClient() (*kubernetes.Clientset, error) {
	cfg, err := kube.Config(os.Getenv("KUBECONFIG"))
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// childElect campaigns for the Lease $CHILD_LEASE as $CHILD_ID until it is
// killed, saying "leading <token>" when it leads and "stopped <token>" when
// its term ends.
func childElect() int {
	cs, err := childClient()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e, err := lease.NewElector(cs.CoordinationV1(), "default", os.Getenv("CHILD_LEASE"),
		lease.WithIdentity(os.Getenv("CHILD_ID")), lease.WithTiming(timing))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l := runner.LeaderOnly(e, runner.Func("work", func(ctx context.Context) error {
		term, _ := runner.TermOf(ctx)
		say("leading %d", term.Token())
		<-ctx.Done()
		say("stopped %d", term.Token())
		return nil
	}))
	say("campaigning")
	return exitCode(runner.Run(context.Background(), l))
}

// childShard shares the items item-00 to item-29 in the group $CHILD_GROUP
// as $CHILD_ID until it is killed, saying "start <item> <token>" when it
// begins handling an item and "stop <item> <token>" when it stops.
func childShard() int {
	cs, err := childClient()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	engine, err := lease.NewShardEngine(cs.CoordinationV1(), "default", os.Getenv("CHILD_GROUP"),
		lease.WithIdentity(os.Getenv("CHILD_ID")), lease.WithTiming(timing))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	items := &watchable.Map[string, int]{}
	for i := range 30 {
		items.Store(fmt.Sprintf("item-%02d", i), i)
	}
	s := runner.Shard("items", items.View(), func(k string) string { return k }, engine,
		func(ctx context.Context, item string) error {
			term, _ := runner.TermOf(ctx)
			say("start %s %d", item, term.Token())
			<-ctx.Done()
			say("stop %s %d", item, term.Token())
			return nil
		}, runner.WithBalance(runner.Balance{Step: 200 * time.Millisecond}))
	say("joining")
	return exitCode(runner.Run(context.Background(), s))
}

func exitCode(err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// child is a replica process and its log.
type child struct {
	id  string
	log string
	p   *integration.Process
}

// startChild starts this test binary as a replica of the given mode, and
// waits until it has said first.
func startChild(t *testing.T, mode, id, kubeconfig, first string, env ...string) *child {
	t.Helper()
	c := &child{id: id, log: filepath.Join(t.TempDir(), id+".log")}
	var err error
	c.p, err = integration.StartProcess(t, integration.Command{
		Name: mode + " replica " + id,
		Path: os.Args[0],
		Args: []string{"-test.run=^$"},
		Env:  append([]string{childEnv + "=" + mode, "KUBECONFIG=" + kubeconfig, "CHILD_ID=" + id}, env...),
		Log:  c.log,
		Ready: func(context.Context) error {
			if len(c.events(t, first)) == 0 {
				return fmt.Errorf("has not said %q yet", first)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// event is one line a child said.
type event struct {
	at   time.Time
	what string   // the first word
	args []string // the others
}

// events returns what the child has said so far, the events named what
// only when what is not empty.
func (c *child) events(t *testing.T, what string) []event {
	f, err := os.Open(c.log)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || ns < 1e18 {
			continue // a log record, not an event
		}
		if what == "" || fields[1] == what {
			out = append(out, event{at: time.Unix(0, ns), what: fields[1], args: fields[2:]})
		}
	}
	return out
}

// waitEvent waits until the child says what with args, and returns when it
// did.
func (c *child) waitEvent(t *testing.T, what string, args ...string) time.Time {
	t.Helper()
	var at time.Time
	testrun.Until(t, func() string {
		for _, e := range c.events(t, what) {
			if strings.Join(e.args, " ") == strings.Join(args, " ") {
				at = e.at
				return ""
			}
		}
		return fmt.Sprintf("%s has not said %s %v; its log ends:\n%s", c.id, what, args, c.p.LogTail())
	})
	return at
}
