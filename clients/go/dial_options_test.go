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
