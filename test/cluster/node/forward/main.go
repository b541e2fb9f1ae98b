// forward: makes loopback ports of this machine reachable on the loopback of a network namespace
// the test cluster created (a node's), the way kind's nodes reach the control plane through their
// container network: no address of the machine's own interfaces is used.
//
// Usage: forward <netns path> [<address>:]<port>[=<target port>]...
// For each it listens on <address>:<port> inside the namespace (127.0.0.1 when no address is
// given: the address must be one of the namespace's) and connects each connection to
// 127.0.0.1:<target port> outside it (the same port when none is given). The pods reach the API
// server so: on the `kubernetes` Service's address and port (10.0.0.1:443), which the node's
// namespace holds as kube-proxy would route it. The listening sockets are created on one OS thread switched into
// the namespace (a socket belongs to the namespace it was created in); every other socket, and the
// thread afterwards, stay in the namespace forward was started in.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

const sysSetns = 308 // setns(2) on linux/amd64
const cloneNewnet = 0x40000000

func setns(fd uintptr) error {
	if _, _, errno := syscall.RawSyscall(sysSetns, fd, cloneNewnet, 0); errno != 0 {
		return errno
	}
	return nil
}

// A listening address inside the namespace and the loopback port outside it that it leads to.
type spec struct{ listen, target string }

func parse(arg string) (spec, error) {
	listen, target, hasTarget := strings.Cut(arg, "=")
	if !strings.Contains(listen, ":") {
		listen = "127.0.0.1:" + listen
	}
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		return spec{}, fmt.Errorf("%q: %w", arg, err)
	}
	if !hasTarget {
		target = port
	}
	if _, err := strconv.Atoi(target); err != nil {
		return spec{}, fmt.Errorf("%q: target port %q is not a number", arg, target)
	}
	return spec{listen, "127.0.0.1:" + target}, nil
}

func listenIn(netns string, specs []spec) ([]net.Listener, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, err
	}
	defer own.Close()
	target, err := os.Open(netns)
	if err != nil {
		return nil, err
	}
	defer target.Close()
	if err := setns(target.Fd()); err != nil {
		return nil, fmt.Errorf("entering %s: %w", netns, err)
	}
	var listeners []net.Listener
	for _, sp := range specs {
		l, err := net.Listen("tcp", sp.listen)
		if err != nil {
			err = fmt.Errorf("listening on %s in %s: %w", sp.listen, netns, err)
		}
		if err != nil {
			if back := setns(own.Fd()); back != nil {
				panic(back) // a thread left in the namespace must not run other goroutines
			}
			return nil, err
		}
		listeners = append(listeners, l)
	}
	if err := setns(own.Fd()); err != nil {
		panic(err)
	}
	return listeners, nil
}

func serve(l net.Listener, to string) {
	for {
		in, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "accept:", err)
			os.Exit(1)
		}
		go func() {
			defer in.Close()
			out, err := net.Dial("tcp", to)
			if err != nil {
				fmt.Fprintln(os.Stderr, "dial", to+":", err)
				return
			}
			defer out.Close()
			done := make(chan struct{}, 2)
			go func() { io.Copy(out, in); out.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
			go func() { io.Copy(in, out); in.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: forward <netns path> [<address>:]<port>[=<target port>]...")
		os.Exit(2)
	}
	var specs []spec
	for _, arg := range os.Args[2:] {
		sp, err := parse(arg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "forward:", err)
			os.Exit(2)
		}
		specs = append(specs, sp)
	}
	listeners, err := listenIn(os.Args[1], specs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i, l := range listeners {
		fmt.Printf("forwarding %s in %s to %s\n", specs[i].listen, os.Args[1], specs[i].target)
		go serve(l, specs[i].target)
	}
	select {}
}
