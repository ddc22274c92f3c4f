package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Registration is what an instance announces about itself: the body of
// POST /v1/services and the params of service/register.
type Registration struct {
	ServiceID string `json:"serviceId"`
	EnvTag    string `json:"envTag,omitempty"`
	// Environment names the deployment environment (such as "staging");
	// unlike EnvTag it is not part of the DiscoveryKey, only shown.
	Environment string            `json:"environment,omitempty"`
	Protocol    string            `json:"protocol"`
	Address     string            `json:"address"`
	Port        int               `json:"port"`
	Version     string            `json:"version,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// RuntimeInstanceID, when set, is the id the instance had before (a
	// client registering again after the registry restarted): the registry
	// keeps it unless another instance holds it (see Registry.Register).
	// It must be an id a registry gave: 32 lowercase hexadecimal digits.
	RuntimeInstanceID string `json:"runtimeInstanceId,omitempty"`
}

// FieldError reports bad input: which field (empty for the request as a
// whole) and what is wrong with it. Over HTTP it is the 400 response body;
// over JSON-RPC it is the data of an invalid params error.
type FieldError struct {
	Message string `json:"error"`
	Field   string `json:"field,omitempty"`
	// Code, when set, is a reason a client can branch on, which does not
	// change when the message does: ReasonNotRegistered.
	Code string `json:"code,omitempty"`
}

// Error returns the message, preceded by the field and a colon when there
// is one.
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// protocols are the accepted values of Registration.Protocol.
var protocols = map[string]bool{"http": true, "https": true, "grpc": true, "ws": true, "wss": true}

// validate checks reg against the limits. It returns nil or a *FieldError.
func (l Limits) validate(reg *Registration) *FieldError {
	if err := l.checkName("serviceId", reg.ServiceID, true); err != nil {
		return err
	}
	if err := l.checkName("envTag", reg.EnvTag, false); err != nil {
		return err
	}
	if err := l.checkName("environment", reg.Environment, false); err != nil {
		return err
	}
	if reg.RuntimeInstanceID != "" && !validInstanceID(reg.RuntimeInstanceID) {
		return fieldErr("runtimeInstanceId", "runtimeInstanceId must be an id a registry gave: 32 lowercase hexadecimal digits")
	}
	if reg.Protocol == "" {
		return fieldErr("protocol", "protocol is required")
	}
	if !protocols[reg.Protocol] {
		return fieldErr("protocol", "protocol must be one of http, https, grpc, ws, wss")
	}
	if err := checkAddress(reg.Address, l.MaxStringLength); err != nil {
		return err
	}
	if reg.Port < 1 || reg.Port > 65535 {
		return fieldErr("port", "port must be between 1 and 65535")
	}
	if err := l.checkText("version", reg.Version); err != nil {
		return err
	}
	if len(reg.Tags) > l.MaxTags {
		return fieldErr("tags", "at most %d tags are allowed", l.MaxTags)
	}
	for k, v := range reg.Tags {
		if k == "" {
			return fieldErr("tags", "tag keys must not be empty")
		}
		if err := l.checkIdentifier("tags", "tag key", k, "/"); err != nil {
			return err
		}
		if err := l.checkText("tags", v); err != nil {
			return err
		}
	}
	return nil
}

// checkName accepts a serviceId or envTag: see checkIdentifier.
func (l Limits) checkName(field, s string, required bool) *FieldError {
	if s == "" {
		if required {
			return fieldErr(field, "%s is required", field)
		}
		return nil
	}
	return l.checkIdentifier(field, field, s, "")
}

// checkIdentifier accepts the character set of identifiers: ASCII letters,
// digits, '.', '_' and '-', and the bytes of extra, starting with a letter
// or a digit. Nothing invisible, nothing that looks like something else
// ("svc-a" followed by a zero-width space, a Cyrillic "а"), nothing that
// needs escaping in a URL or a log line. what names the value in messages.
func (l Limits) checkIdentifier(field, what, s, extra string) *FieldError {
	if len(s) > l.MaxStringLength {
		return fieldErr(field, "%s is longer than %d bytes", what, l.MaxStringLength)
	}
	for i := 0; i < len(s); {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if alnum || i > 0 && (c == '.' || c == '_' || c == '-' || strings.IndexByte(extra, c) >= 0) {
			i++
			continue
		}
		allowed := "ASCII letters, digits, '.', '_' and '-'"
		if extra != "" {
			allowed = "ASCII letters, digits, '.', '_', '-' and " + quoteBytes(extra)
		}
		return fieldErr(field, "%s may contain only %s, and must start with a letter or digit: %s at byte %d is not allowed",
			what, allowed, describeRune(s[i:]), i)
	}
	return nil
}

func quoteBytes(s string) string {
	q := make([]string, len(s))
	for i := range len(s) {
		q[i] = "'" + s[i:i+1] + "'"
	}
	return strings.Join(q, ", ")
}

// describeRune names the first character of s for an error message, in a
// form that shows what an invisible or lookalike character is.
func describeRune(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && size <= 1:
		return fmt.Sprintf("byte 0x%02x (not valid UTF-8)", s[0])
	case r < utf8.RuneSelf && unicode.IsPrint(r):
		return fmt.Sprintf("%q", r)
	default:
		return fmt.Sprintf("%U", r)
	}
}

// checkText accepts free text (version, tag values): valid UTF-8 of
// printable characters (letters, marks, numbers, punctuation, symbols and
// the ASCII space; no control, format, private-use or other invisible
// characters), up to the length limit.
func (l Limits) checkText(field, s string) *FieldError {
	if len(s) > l.MaxStringLength {
		return fieldErr(field, "%s is longer than %d bytes", field, l.MaxStringLength)
	}
	if !utf8.ValidString(s) {
		return fieldErr(field, "%s is not valid UTF-8", field)
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
		kind := "invisible or non-printable characters"
		if r, _ := utf8.DecodeRuneInString(s[i:]); unicode.IsControl(r) {
			kind = "control characters"
		}
		return fieldErr(field, "%s must not contain %s: %s at byte %d", field, kind, describeRune(s[i:]), i)
	}
	return nil
}

// checkAddress accepts an IP address (IPv6 without brackets) or a DNS name,
// without scheme or port.
func checkAddress(s string, maxLen int) *FieldError {
	if s == "" {
		return fieldErr("address", "address is required")
	}
	if len(s) > min(maxLen, 253) {
		return fieldErr("address", "address is longer than %d bytes", min(maxLen, 253))
	}
	if net.ParseIP(s) != nil {
		return nil
	}
	for label := range strings.SplitSeq(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fieldErr("address", "address must be an IP address or a host name without scheme or port")
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fieldErr("address", "address must be an IP address or a host name without scheme or port")
			}
		}
	}
	return nil
}

// registrationWire is Registration as decoded, with Port a pointer so that a
// missing port is told apart from a zero one.
type registrationWire struct {
	ServiceID         string            `json:"serviceId"`
	EnvTag            string            `json:"envTag"`
	Environment       string            `json:"environment"`
	Protocol          string            `json:"protocol"`
	Address           string            `json:"address"`
	Port              *int              `json:"port"`
	Version           string            `json:"version"`
	Tags              map[string]string `json:"tags"`
	RuntimeInstanceID string            `json:"runtimeInstanceId"`
}

func (w *registrationWire) registration() (Registration, *FieldError) {
	if w.Port == nil {
		if w.ServiceID == "" {
			return Registration{}, fieldErr("serviceId", "serviceId is required")
		}
		return Registration{}, fieldErr("port", "port is required")
	}
	return Registration{
		ServiceID: w.ServiceID, EnvTag: w.EnvTag, Environment: w.Environment, Protocol: w.Protocol,
		Address: w.Address, Port: *w.Port, Version: w.Version, Tags: w.Tags, RuntimeInstanceID: w.RuntimeInstanceID,
	}, nil
}

// decodeRegistration decodes and validates the body of POST /v1/services.
func (l Limits) decodeRegistration(data []byte) (Registration, *FieldError) {
	// encoding/json would turn invalid UTF-8 into U+FFFD without a word:
	// refuse it before decoding.
	if !utf8.Valid(data) {
		return Registration{}, fieldErr("", "request body is not valid UTF-8")
	}
	var w registrationWire
	if err := decodeStrict(data, &w); err != nil {
		return Registration{}, err
	}
	reg, err := w.registration()
	if err != nil {
		return Registration{}, err
	}
	if err := l.validate(&reg); err != nil {
		return Registration{}, err
	}
	return reg, nil
}

// decodeStrict decodes exactly one JSON object from data into v, rejecting
// unknown fields and trailing data, and explains what is wrong in a
// FieldError.
func decodeStrict(data []byte, v any) *FieldError {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fieldErr("", "invalid JSON: unexpected data after the object")
	}
	return nil
}

func jsonError(err error) *FieldError {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return fieldErr("", "invalid JSON: empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fieldErr("", "invalid JSON: unexpected end")
	case errors.As(err, &syntax):
		return fieldErr("", "invalid JSON at offset %d: %s", syntax.Offset, syntax.Error())
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fieldErr("", "expected a JSON object")
		}
		return fieldErr(typ.Field, "%s must be %s, not a JSON %s", typ.Field, describeType(typ.Type.Kind().String()), typ.Value)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field := strings.Trim(name, `"`)
		return fieldErr(field, "unknown field %q", field)
	}
	return fieldErr("", "invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func describeType(kind string) string {
	switch kind {
	case "int", "int64", "uint64":
		return "an integer"
	case "string":
		return "a string"
	case "map":
		return "an object of strings"
	case "struct":
		return "an object"
	}
	return "a " + kind
}
