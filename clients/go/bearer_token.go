package holdshelf

import (
	"context"

	"google.golang.org/grpc/credentials"
)

// bearerToken is per-RPC credentials that send a bearer token.
type bearerToken struct {
	header string
}

var _ credentials.PerRPCCredentials = bearerToken{}

// GetRequestMetadata adds the authorization header to every call.
func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": b.header}, nil
}

// RequireTransportSecurity is false so that a broker on loopback without TLS
// can check tokens too, as with the other languages' clients.
func (bearerToken) RequireTransportSecurity() bool { return false }
