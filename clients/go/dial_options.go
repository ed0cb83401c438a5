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
	transport credentials.TransportCredentials // nil: plaintext
	token     string
	extra     []grpc.DialOption
	batching  SendBatching
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

// WithTLS connects over TLS with these files instead of plaintext.
func WithTLS(files TLSFiles) Option {
	return func(s *dialSettings) error {
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

// printable is what a header value carries unchanged: printable ASCII
// without spaces.
var printable = regexp.MustCompile(`^[\x21-\x7e]+$`)

// WithToken sends "authorization: Bearer <token>" on every call, streams
// included. It is sent over plaintext too (a broker on loopback); use WithTLS
// across a network.
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
