package httpserver

import (
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ProcessMaxConnections returns how many connections all the Servers of
// the process may hold open together: half the soft limit on open file
// descriptors (RLIMIT_NOFILE) as the process started, at least 64. The
// other half is left for what the program opens itself: files, listeners,
// and the connections it makes, such as a proxy's to its upstreams, which
// are as many as the requests it forwards.
//
// Go raises the soft limit to the hard one when a program starts (since
// Go 1.19), so the limit that counts is usually the hard one: raise it
// with ulimit -Hn, or the LimitNOFILE of a systemd unit, to serve more.
func ProcessMaxConnections() int { return processBudget().capacity }

// processBudget is the process-wide connection budget, shared by every
// Server: descriptors are a resource of the process, not of a server.
var processBudget = sync.OnceValue(func() *semaphore {
	n := 1024 // when the limit cannot be read, assume the usual default
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur > 0 && rl.Cur < 1<<30 {
		n = int(rl.Cur)
	}
	return newSemaphore(max(n/2, 64))
})

// semaphore counts held slots up to a capacity.
type semaphore struct {
	capacity int
	slots    chan struct{}
}

func newSemaphore(n int) *semaphore {
	return &semaphore{capacity: n, slots: make(chan struct{}, n)}
}

func (s *semaphore) tryAcquire() bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// acquire waits for a slot until done is closed, and reports whether it
// got one.
func (s *semaphore) acquire(done <-chan struct{}) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	case <-done:
		return false
	}
}

func (s *semaphore) release() { <-s.slots }

func (s *semaphore) held() int { return len(s.slots) }

// limitListener accepts connections while the server and the process have
// room for them, and otherwise stops accepting: new connections then wait
// in the kernel's listen queue (or time out there) until one closes, and
// the process never runs out of descriptors because of its clients.
type limitListener struct {
	net.Listener
	own, process *semaphore // own is nil without a cap of the server's own
	log          *slog.Logger
	open         atomic.Int64
	closed       chan struct{}
	closeOnce    sync.Once
	// empty is closed once the listener is closed and its last connection
	// too, hijacked ones included.
	empty     chan struct{}
	emptyOnce sync.Once

	mu       sync.Mutex
	full     bool      // the last Accept had to wait
	lastWarn time.Time // when the last warning was logged
	waits    int       // times the limit was reached since the last warning
}

// warnEvery bounds how often a listener that keeps reaching its limit logs
// it.
const warnEvery = time.Minute

func newLimitListener(ln net.Listener, own int, process *semaphore, log *slog.Logger) *limitListener {
	l := &limitListener{Listener: ln, process: process, log: log, closed: make(chan struct{}), empty: make(chan struct{})}
	if own > 0 {
		l.own = newSemaphore(own)
	}
	return l
}

// Accept waits for room for one more connection, then accepts it.
func (l *limitListener) Accept() (net.Conn, error) {
	if !l.acquire() {
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		l.release()
		return nil, err
	}
	l.open.Add(1)
	return &limitedConn{Conn: c, l: l}, nil
}

// acquire takes a slot of the server's own cap, if it has one, and of the
// process budget, waiting while either is full. It returns false when the
// listener is closed meanwhile.
func (l *limitListener) acquire() bool {
	if l.own != nil && !l.own.tryAcquire() {
		l.reached("server", l.own.capacity)
		if !l.own.acquire(l.closed) {
			return false
		}
	}
	if !l.process.tryAcquire() {
		l.reached("process", l.process.capacity)
		if !l.process.acquire(l.closed) {
			if l.own != nil {
				l.own.release()
			}
			return false
		}
	}
	l.recovered()
	return true
}

func (l *limitListener) release() {
	l.process.release()
	if l.own != nil {
		l.own.release()
	}
}

// reached logs that a limit is reached, at most once per warnEvery.
func (l *limitListener) reached(scope string, limit int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.full = true
	l.waits++
	if now := time.Now(); now.Sub(l.lastWarn) >= warnEvery {
		l.log.Warn("connection limit reached: new connections wait in the listen queue until others close",
			"scope", scope, "limit", limit, "open", l.open.Load(), "times", l.waits,
			"hint", "see httpserver.WithMaxConnections and ProcessMaxConnections")
		l.lastWarn, l.waits = now, 0
	}
}

// recovered logs, once, that connections are accepted again.
func (l *limitListener) recovered() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.full {
		l.full = false
		l.log.Info("connection limit: accepting connections again", "open", l.open.Load())
	}
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	err := l.Listener.Close()
	l.checkEmpty()
	return err
}

// drained returns a channel that is closed once the listener is closed and
// every connection it accepted is closed too.
func (l *limitListener) drained() <-chan struct{} { return l.empty }

func (l *limitListener) checkEmpty() {
	select {
	case <-l.closed:
		if l.open.Load() == 0 {
			l.emptyOnce.Do(func() { close(l.empty) })
		}
	default:
	}
}

// limitedConn gives its slots back when it is closed.
type limitedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

// CloseWrite sends the end of the stream while reading goes on, as
// net/http does before closing a connection after a response, so that the
// client gets the whole response rather than a reset.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		c.l.release()
		c.l.checkEmpty()
	})
	return err
}
