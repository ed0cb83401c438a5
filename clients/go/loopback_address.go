package holdshelf

import (
	"net"
	"strings"
)

// isLoopbackAddress tells whether a Dial target only reaches this machine:
// a loopback IP (127.0.0.0/8, ::1, ::ffff:127.x.y.z; with or without
// brackets and port), localhost, or a Unix socket (unix:, unix-abstract:),
// as the TypeScript client's isLoopbackAddress says. Anything else (another
// host name, a LAN address, a target with another gRPC scheme, one that
// cannot be read) is not: Dial then uses TLS unless told otherwise.
func isLoopbackAddress(target string) bool {
	if strings.HasPrefix(target, "unix:") || strings.HasPrefix(target, "unix-abstract:") {
		return true
	}
	host := target
	if h, _, err := net.SplitHostPort(target); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
