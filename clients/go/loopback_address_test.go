package holdshelf

import "testing"

func TestOnlyLoopbackTargetsAreLoopback(t *testing.T) {
	cases := map[string]bool{
		"127.0.0.1:50051":          true,
		"127.8.9.10:1":             true,
		"[::1]:50051":              true,
		"::1":                      true,
		"[::1]":                    true,
		"[::ffff:127.0.0.1]:50051": true,
		"localhost:50051":          true,
		"LocalHost":                true,
		"unix:/run/holdshelf.sock": true,
		"unix-abstract:holdshelf":  true,
		"10.0.0.5:50051":           false,
		"[2001:db8::1]:50051":      false,
		"0.0.0.0:50051":            false,
		"broker.internal:50051":    false,
		"localhost.evil.example:1": false,
		"dns:///localhost:50051":   false,
		"":                         false,
	}
	for target, want := range cases {
		if got := isLoopbackAddress(target); got != want {
			t.Errorf("isLoopbackAddress(%q) = %v, want %v", target, got, want)
		}
	}
}
