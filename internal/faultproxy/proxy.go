// Package faultproxy puts a network fault between a client and a server in a
// test: a TCP proxy on the loopback interface that forwards to one target
// until the test cuts or stalls it.
//
// A client is pointed at the proxy's Addr instead of the server. Cut
// simulates a connection torn down (the peer resets it, as after a crash or a
// firewall rule that rejects), Pause simulates a partition (packets vanish,
// nothing is closed, so only the client's own timeouts notice), and Restore
// heals either. The proxy knows nothing of the protocol it carries.
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// Proxy forwards TCP connections accepted on a loopback address to a target
// address. Its methods are safe for concurrent use. Create one with New and
// Close it when done.
type Proxy struct {
	ln     net.Listener
	target string
	ctx    context.Context // cancelled by Close; bounds dials to the target
	stop   context.CancelFunc

	mu     sync.Mutex
	cut    bool
	gate   chan struct{} // closed while data may flow; open while paused
	links  map[*link]struct{}
	closed bool

	wg sync.WaitGroup // the accept loop and every link's goroutines
}

// New starts a proxy listening on a free port of 127.0.0.1 that forwards
// every connection to target (host:port), dialling the target once per
// accepted connection. A connection whose target dial fails is closed.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for a proxy to %s: %w", target, err)
	}
	ctx, stop := context.WithCancel(context.Background())
	gate := make(chan struct{})
	close(gate)
	p := &Proxy{ln: ln, target: target, ctx: ctx, stop: stop, gate: gate, links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the host:port clients connect to instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target is the host:port the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Cut closes every open connection, and resets each new one as soon as it is
// accepted, until Restore. Both sides of a cut connection see it end; bytes
// in flight are lost. Cut on a paused proxy replaces the pause.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	links := p.drainLinks()
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
}

// Pause stops all traffic without closing anything, like a network partition:
// open connections stay open but no byte is forwarded in either direction,
// and new connections are accepted but not forwarded. Bytes sent meanwhile
// are held and delivered after Restore, unless the connection is closed
// first. Pause on a cut proxy keeps it cut.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cut && isClosed(p.gate) {
		p.gate = make(chan struct{})
	}
}

// Restore forwards traffic again after Cut or Pause. Connections cut earlier
// stay closed; clients must reconnect, as they would after a real fault.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	if !isClosed(p.gate) {
		close(p.gate)
	}
}

// Close stops the proxy: it stops listening, closes every connection and
// waits until all of its goroutines have returned. Close is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	links := p.drainLinks()
	if !isClosed(p.gate) {
		close(p.gate) // waiters see the links closed and return
	}
	p.mu.Unlock()

	p.stop()
	err := p.ln.Close()
	for _, l := range links {
		l.close()
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			return // Close closed the listener
		}
		p.mu.Lock()
		switch {
		case p.closed:
			p.mu.Unlock()
			conn.Close()
			return
		case p.cut:
			p.mu.Unlock()
			reset(conn)
			continue
		}
		l := &link{client: conn, done: make(chan struct{})}
		p.links[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(l)
	}
}

// serve dials the target for one accepted connection, once traffic may flow,
// and copies bytes both ways until either side ends.
func (p *Proxy) serve(l *link) {
	defer p.wg.Done()
	defer p.forget(l)
	if !p.wait(l) {
		return
	}
	var d net.Dialer
	server, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		l.close()
		return
	}
	if !l.setServer(server) {
		server.Close() // cut or closed while dialling
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(l, server, l.client) }()
	go func() { defer wg.Done(); p.pipe(l, l.client, server) }()
	wg.Wait()
	l.close()
}

// pipe copies from src to dst, waiting at the gate before each write so a
// pause holds what was read. At src's end of stream it half-closes dst, so a
// protocol that signals the end of its requests that way still works.
func (p *Proxy) pipe(l *link, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait(l) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				l.close()
				return
			}
		}
		if errors.Is(err, io.EOF) {
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			return
		}
		if err != nil {
			l.close()
			return
		}
	}
}

// wait blocks while the proxy is paused, and reports whether l may go on
// (false once l has been closed).
func (p *Proxy) wait(l *link) bool {
	p.mu.Lock()
	gate := p.gate
	p.mu.Unlock()
	select {
	case <-gate:
	case <-l.done:
		return false
	}
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

func (p *Proxy) forget(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// drainLinks empties the set of open links and returns them; p.mu is held.
func (p *Proxy) drainLinks() []*link {
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	clear(p.links)
	return links
}

// link is one client connection and, once dialled, its connection to the
// target.
type link struct {
	client net.Conn
	done   chan struct{} // closed by close

	mu     sync.Mutex
	server net.Conn
	closed bool
}

// setServer records the target connection, or reports false if the link was
// closed meanwhile.
func (l *link) setServer(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.server = c
	return true
}

func (l *link) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	close(l.done)
	reset(l.client)
	if l.server != nil {
		reset(l.server)
	}
}

// reset closes c so that its peer sees a reset rather than an orderly end of
// stream, as it would from a crashed or firewalled peer.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
