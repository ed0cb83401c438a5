package holdshelf

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func dialError(t *testing.T, options ...Option) string {
	t.Helper()
	client, err := Dial(context.Background(), "127.0.0.1:1", options...)
	if err == nil {
		client.Close()
		t.Fatal("Dial accepted the options")
	}
	return err.Error()
}

func TestWithTokenRefusesWhatAHeaderCannotCarryWithoutQuotingIt(t *testing.T) {
	message := dialError(t, WithToken("secret with spaces"))
	if !strings.Contains(message, "printable ASCII") || strings.Contains(message, "secret") {
		t.Errorf("message = %q", message)
	}
	dialError(t, WithToken(""))
}

func TestWithTLSSaysWhichFileIsWrong(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]TLSFiles{
		"TLS CA file":               {CAFile: filepath.Join(dir, "missing.crt")},
		"holds no PEM certificate":  {CAFile: notPEM},
		"both CertFile and KeyFile": {CertFile: notPEM},
		"TLS client certificate":    {CertFile: notPEM, KeyFile: notPEM},
	}
	for want, files := range cases {
		if message := dialError(t, WithTLS(files)); !strings.Contains(message, want) {
			t.Errorf("%+v: message %q does not say %q", files, message, want)
		}
	}
}

func TestDialWithValidOptionsDoesNotWaitForTheBroker(t *testing.T) {
	client, err := Dial(context.Background(), "127.0.0.1:1", WithToken("abc"), WithDialOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDialUsesTLSBeyondLoopbackUnlessToldPlaintext(t *testing.T) {
	cases := []struct {
		address string
		options []Option
		tls     bool
	}{
		{"10.0.0.5:50051", nil, true},
		{"broker.internal:50051", []Option{WithToken("abc")}, true},
		{"127.0.0.1:50051", nil, false},
		{"localhost:50051", []Option{WithToken("abc")}, false},
		{"10.0.0.5:50051", []Option{WithPlaintext()}, false},
		{"10.0.0.5:50051", []Option{WithPlaintext(), WithToken("abc"), AllowPlaintextToken()}, false},
		{"127.0.0.1:50051", []Option{WithTLS(TLSFiles{})}, true},
	}
	for _, c := range cases {
		var settings dialSettings
		for _, option := range c.options {
			if err := option(&settings); err != nil {
				t.Fatal(err)
			}
		}
		transport, err := settings.transportFor(c.address)
		if err != nil {
			t.Fatalf("%s: %v", c.address, err)
		}
		if got := transport != nil && transport.Info().SecurityProtocol == "tls"; got != c.tls {
			t.Errorf("%s with %d options: TLS %v, want %v", c.address, len(c.options), got, c.tls)
		}
	}
}

func TestDialRefusesATokenInPlaintextBeyondLoopback(t *testing.T) {
	_, err := Dial(context.Background(), "10.0.0.5:50051", WithPlaintext(), WithToken("secret-token"))
	if err == nil || !strings.Contains(err.Error(), "AllowPlaintextToken") || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("err = %v", err)
	}
	_, err = Dial(context.Background(), "10.0.0.5:50051", WithTLS(TLSFiles{}), WithPlaintext())
	if err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("WithTLS and WithPlaintext: err = %v", err)
	}
}
