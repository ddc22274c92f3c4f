package registry

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
)

// AddressPolicy says which addresses instances may register: a gateway
// sends traffic to whatever is registered, so an address that reaches what
// clients must not (a cloud metadata service, the control plane itself)
// would turn the registry into a way in. Pass it with WithAddressPolicy.
//
// Whatever the policy, the unspecified addresses (0.0.0.0, ::) and
// multicast addresses are refused: nothing can be sent to them. The zero
// AddressPolicy, the default, also refuses
//
//   - link-local addresses (169.254.0.0/16, fe80::/10), where cloud
//     metadata services answer (169.254.169.254);
//   - the control plane's own address: the port a registration arrives on,
//     at a loopback address ("localhost" names included), at the address it
//     arrived at, or at any other address of the host's interfaces.
//
// The policy looks at IP addresses; it does not resolve host names, whose
// answer could change after the check anyway. A registry whose instances
// all have IP addresses should refuse names (DenyHostNames).
//
// Refusals answer 403 (HTTP) or CodeForbidden (JSON-RPC), with the field
// "address".
type AddressPolicy struct {
	// AllowLinkLocal accepts link-local addresses.
	AllowLinkLocal bool
	// AllowControlPlane accepts the control plane's own address.
	AllowControlPlane bool
	// DenyHostNames refuses addresses that are host names rather than IP
	// addresses.
	DenyHostNames bool
	// Deny lists further networks whose addresses are refused (another
	// metadata address, such as fd00:ec2::254/128; a management network).
	Deny []netip.Prefix
	// DenyEndpoints lists further address and port pairs that are refused,
	// such as the addresses the program's other servers listen on (a
	// gateway registered as its own upstream sends its requests round in a
	// loop). An unspecified address (0.0.0.0:8080) stands for the port at
	// every address of the host, as a server listening there would.
	DenyEndpoints []netip.AddrPort
	// Allow, when not empty, lists the only networks whose addresses are
	// accepted; host names are then refused too.
	Allow []netip.Prefix
}

// check returns why the policy refuses address:port, for a registration
// that arrived at the local address local (nil when not over the network),
// or "" when it accepts it.
func (p AddressPolicy) check(address string, port int, local net.Addr) string {
	ip, err := netip.ParseAddr(address)
	if err != nil { // a host name: validate made sure it is one
		if len(p.Allow) > 0 || p.DenyHostNames {
			return "address must be an IP address: host names are not accepted here"
		}
		name := strings.ToLower(strings.TrimSuffix(address, "."))
		if name != "localhost" && !strings.HasSuffix(name, ".localhost") {
			return ""
		}
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1}) // what localhost names are (RFC 6761)
	}
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified():
		return "address must not be unspecified (0.0.0.0 or ::): nothing can be sent there"
	case ip.IsMulticast():
		return "address must not be a multicast address"
	case !p.AllowLinkLocal && (ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast()):
		return "address must not be link-local (169.254.0.0/16, fe80::/10), where metadata services answer"
	case len(p.Allow) > 0 && !slices.ContainsFunc(p.Allow, func(n netip.Prefix) bool { return n.Contains(ip) }):
		return "address is not in the networks this registry accepts"
	case slices.ContainsFunc(p.Deny, func(n netip.Prefix) bool { return n.Contains(ip) }):
		return "address is in a network this registry refuses"
	}
	for _, e := range p.DenyEndpoints {
		if int(e.Port()) == port && (e.Addr().Unmap() == ip || e.Addr().IsUnspecified() && isLocal(ip)) {
			return "address and port are refused by this registry: another server of the program listens there"
		}
	}
	if !p.AllowControlPlane && local != nil {
		if lip, lport, ok := addrPort(local); ok && lport == port && (ip == lip || isLocal(ip)) {
			return "address and port are the registry's own: an instance cannot be the control plane"
		}
	}
	return ""
}

// addrPort splits a TCP address.
func addrPort(a net.Addr) (netip.Addr, int, bool) {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}, 0, false
	}
	return ap.Addr().Unmap(), int(ap.Port()), true
}

// isLocal reports whether ip is an address of this host: loopback, or one
// of its interfaces'.
func isLocal(ip netip.Addr) bool {
	return ip.IsLoopback() || slices.Contains(hostAddrs(), ip)
}

// hostAddrs lists the addresses of the host's interfaces, read once: they
// seldom change while a program runs, and reading them takes a system call
// or two.
var hostAddrs = sync.OnceValue(func() []netip.Addr {
	addrs, _ := net.InterfaceAddrs() // none when they cannot be read: loopback is still known
	var out []netip.Addr
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
})
