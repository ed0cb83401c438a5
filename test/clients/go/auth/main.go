// Command auth is a test fixture of the Go client (test/clients/go-client
// .test.ts): it dials with the given TLS files, token and plaintext
// options (none: Dial's default, TLS with the system's roots beyond
// loopback, which SSL_CERT_FILE can point at a test CA), makes a queue,
// sends and receives one message, and prints one JSON line saying how that
// went: {"check":"roundtrip","code":"OK"} or the error's code and reason.
// A bad option prints {"check":"dial","error":...}.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

func main() {
	address := flag.String("address", "", "broker address")
	token := flag.String("token", "", "bearer token (none if empty)")
	caFile := flag.String("tls-ca", "", "CA file (TLS when any TLS flag is given)")
	certFile := flag.String("tls-cert", "", "client certificate")
	keyFile := flag.String("tls-key", "", "client key")
	plaintext := flag.Bool("plaintext", false, "WithPlaintext: no TLS, also beyond loopback")
	plaintextToken := flag.Bool("allow-plaintext-token", false, "AllowPlaintextToken")
	queue := flag.String("queue", "auth-q", "queue to make")
	flag.Parse()

	var options []holdshelf.Option
	if *caFile != "" || *certFile != "" || *keyFile != "" {
		options = append(options, holdshelf.WithTLS(holdshelf.TLSFiles{CAFile: *caFile, CertFile: *certFile, KeyFile: *keyFile}))
	}
	if *plaintext {
		options = append(options, holdshelf.WithPlaintext())
	}
	if *plaintextToken {
		options = append(options, holdshelf.AllowPlaintextToken())
	}
	if *token != "" {
		options = append(options, holdshelf.WithToken(*token))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := holdshelf.Dial(ctx, *address, options...)
	if err != nil {
		emit(map[string]any{"check": "dial", "error": err.Error()})
		return
	}
	defer client.Close()
	emit(map[string]any{"check": "roundtrip", "code": roundTrip(ctx, client, *queue)})
}

func roundTrip(ctx context.Context, client *holdshelf.Client, queue string) string {
	err := func() error {
		if _, err := client.CreateQueue(ctx, queue, nil); err != nil {
			return err
		}
		if _, err := client.Send(ctx, queue, []byte("secure"), nil); err != nil {
			return err
		}
		messages, err := client.Receive(ctx, queue, &holdshelf.ReceiveOptions{WaitTime: holdshelf.Duration(5 * time.Second)})
		if err != nil {
			return err
		}
		if len(messages) != 1 || string(messages[0].Body) != "secure" {
			return errors.New("the message did not come back")
		}
		return client.Delete(ctx, queue, messages[0].ReceiptHandle)
	}()
	var e *holdshelf.Error
	switch {
	case err == nil:
		return "OK"
	case errors.As(err, &e):
		return holdshelf.CodeName(e.Code)
	default:
		return err.Error()
	}
}

func emit(v map[string]any) {
	_ = json.NewEncoder(os.Stdout).Encode(v)
}
