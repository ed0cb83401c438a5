package main

import (
	"io"
	"net"
	"sync"
)

// cutter forwards TCP connections to a broker and can cut them all at once,
// as a lost network does; new connections go through as before.
type cutter struct {
	listener net.Listener
	target   string
	mu       sync.Mutex
	conns    []net.Conn
}

func startCutter(target string) (*cutter, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &cutter{listener: listener, target: target}
	go c.accept()
	return c, nil
}

func (c *cutter) address() string { return c.listener.Addr().String() }

func (c *cutter) accept() {
	for {
		client, err := c.listener.Accept()
		if err != nil {
			return
		}
		broker, err := net.Dial("tcp", c.target)
		if err != nil {
			client.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, client, broker)
		c.mu.Unlock()
		go pipe(client, broker)
		go pipe(broker, client)
	}
}

func pipe(to, from net.Conn) {
	_, _ = io.Copy(to, from)
	to.Close()
	from.Close()
}

// cut closes every connection made so far.
func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

func (c *cutter) close() {
	c.listener.Close()
	c.cut()
}
