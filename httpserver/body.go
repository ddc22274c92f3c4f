package httpserver

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ErrBodyTimeout is what reading a request body returns once the body
// timeout (WithBodyTimeout) is over; errors.Is(err, os.ErrDeadlineExceeded)
// holds for it too. A handler answers it with 408 Request Timeout.
var ErrBodyTimeout = errors.New("httpserver: request body not received within the body timeout")

// bodyTimeout is the handler of a Server with a body timeout: a request
// that has a body must deliver it within d of the end of its headers, and
// what the handler leaves unread of it is not read at all.
type bodyTimeout struct {
	h http.Handler
	d time.Duration
}

func (b bodyTimeout) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		b.h.ServeHTTP(w, r)
		return
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(b.d)); err != nil {
		b.h.ServeHTTP(w, r) // a ResponseWriter without deadlines: nothing to bound
		return
	}
	// A shallow copy: net/http looks at the original request's body after
	// the handler, to decide whether to read what is left of it (which the
	// deadline bounds too).
	r2 := *r
	body := &deadlineBody{ReadCloser: r.Body, clear: func() { _ = rc.SetReadDeadline(time.Time{}) }}
	r2.Body = body
	b.h.ServeHTTP(w, &r2)
	if !body.eof.Load() {
		// The handler answered without the whole body (a refusal, say).
		// net/http would go on reading it, to reuse the connection, for as
		// long as the client cares to trickle it: read no more, and let
		// the connection close after the response.
		_ = rc.SetReadDeadline(time.Now())
	}
}

// deadlineBody lifts the read deadline once the body is read to its end,
// so that it does not cut the response of a handler that streams after
// reading, and names the timeout when it strikes.
type deadlineBody struct {
	io.ReadCloser
	clear func()
	once  sync.Once
	eof   atomic.Bool
}

func (d *deadlineBody) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		d.eof.Store(true)
		d.once.Do(d.clear)
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = timeoutError{err}
	}
	return n, err
}

// timeoutError is ErrBodyTimeout, wrapping the deadline error.
type timeoutError struct{ err error }

func (e timeoutError) Error() string        { return ErrBodyTimeout.Error() }
func (e timeoutError) Is(target error) bool { return target == ErrBodyTimeout }
func (e timeoutError) Unwrap() error        { return e.err }
