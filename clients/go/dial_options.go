package holdshelf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"regexp"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Option configures how Dial reaches the broker.
type Option func(*dialSettings) error

type dialSettings struct {
	transport credentials.TransportCredentials // WithTLS's; nil: by the address
	plaintext bool                             // WithPlaintext
	// plaintextToken: AllowPlaintextToken.
	plaintextToken bool
	token          string
	extra          []grpc.DialOption
	batching       SendBatching
}

// TLSFiles are a client's TLS files, each a PEM file path.
type TLSFiles struct {
	// CAFile holds the CA certificate(s) the broker's certificate must chain
	// to; empty trusts the system's roots.
	CAFile string
	// CertFile and KeyFile are this client's certificate and key, for a broker
	// that requires client certificates (mutual TLS); both or neither.
	CertFile string
	KeyFile  string
}

// WithTLS connects over TLS with these files, to any address (without it,
// Dial uses TLS with the system's roots beyond loopback, plaintext on
// loopback).
func WithTLS(files TLSFiles) Option {
	return func(s *dialSettings) error {
		if s.plaintext {
			return errTLSAndPlaintext
		}
		config := &tls.Config{MinVersion: tls.VersionTLS12}
		if files.CAFile != "" {
			pem, err := os.ReadFile(files.CAFile)
			if err != nil {
				return fmt.Errorf("holdshelf: TLS CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return fmt.Errorf("holdshelf: TLS CA file %s holds no PEM certificate", files.CAFile)
			}
			config.RootCAs = pool
		}
		if (files.CertFile == "") != (files.KeyFile == "") {
			return errors.New("holdshelf: TLS needs both CertFile and KeyFile, or neither")
		}
		if files.CertFile != "" {
			pair, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
			if err != nil {
				return fmt.Errorf("holdshelf: TLS client certificate: %w", err)
			}
			config.Certificates = []tls.Certificate{pair}
		}
		s.transport = credentials.NewTLS(config)
		return nil
	}
}

// WithPlaintext connects without TLS, also to an address beyond loopback
// (Dial's default there is TLS): for a broker on a private network, or
// behind a TLS-terminating proxy or service-mesh sidecar beside the client.
// A token still goes only to loopback over it, unless AllowPlaintextToken is
// given too.
func WithPlaintext() Option {
	return func(s *dialSettings) error {
		if s.transport != nil {
			return errTLSAndPlaintext
		}
		s.plaintext = true
		return nil
	}
}

var errTLSAndPlaintext = errors.New("holdshelf: WithTLS and WithPlaintext exclude each other")

// AllowPlaintextToken lets WithToken's token go over WithPlaintext's
// connection to an address beyond loopback, where anyone on the path could
// read it: only where something else protects the path (a sidecar that
// encrypts it, say). As the TypeScript client's allowPlaintextToken.
func AllowPlaintextToken() Option {
	return func(s *dialSettings) error {
		s.plaintextToken = true
		return nil
	}
}

// printable is what a header value carries unchanged: printable ASCII
// without spaces.
var printable = regexp.MustCompile(`^[\x21-\x7e]+$`)

// WithToken sends "authorization: Bearer <token>" on every call, streams
// included. It goes over TLS, or over plaintext to a loopback address; Dial
// refuses to send it in plaintext beyond loopback (WithPlaintext) unless
// AllowPlaintextToken is given.
func WithToken(token string) Option {
	return func(s *dialSettings) error {
		// The token is never quoted back: it is a secret.
		if !printable.MatchString(token) {
			return errors.New("holdshelf: the token must be printable ASCII without spaces")
		}
		s.token = token
		return nil
	}
}

// WithDialOptions passes gRPC dial options through, after the client's own.
func WithDialOptions(options ...grpc.DialOption) Option {
	return func(s *dialSettings) error {
		s.extra = append(s.extra, options...)
		return nil
	}
}

// transportFor is the TLS a connection to address uses, nil for plaintext:
// WithTLS's; else none on loopback or with WithPlaintext; else TLS with the
// system's roots, so that a token and the messages never cross a network
// in plaintext by default. A token in plaintext beyond loopback is refused.
func (s *dialSettings) transportFor(address string) (credentials.TransportCredentials, error) {
	if s.transport != nil {
		return s.transport, nil
	}
	loopback := isLoopbackAddress(address)
	if !loopback && !s.plaintext {
		return credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12}), nil
	}
	if !loopback && s.token != "" && !s.plaintextToken {
		return nil, fmt.Errorf("holdshelf: refusing to send a bearer token in plaintext to %s, which is not a loopback address: "+
			"leave WithPlaintext out to use TLS, or add AllowPlaintextToken", address)
	}
	return nil, nil
}
