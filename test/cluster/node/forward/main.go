// forward: makes loopback ports of this machine reachable on the loopback of a network namespace
// the test cluster created (a node's), the way kind's nodes reach the control plane through their
// container network: no address of the machine's own interfaces is used.
//
// Usage: forward <netns path> <port>...
// For each port it listens on 127.0.0.1:<port> inside the namespace and connects each connection
// to 127.0.0.1:<port> outside it. The listening sockets are created on one OS thread switched into
// the namespace (a socket belongs to the namespace it was created in); every other socket, and the
// thread afterwards, stay in the namespace forward was started in.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
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

func listenIn(netns string, ports []string) ([]net.Listener, error) {
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
	for _, port := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			err = fmt.Errorf("listening on 127.0.0.1:%s in %s: %w", port, netns, err)
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
		fmt.Fprintln(os.Stderr, "usage: forward <netns path> <port>...")
		os.Exit(2)
	}
	listeners, err := listenIn(os.Args[1], os.Args[2:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i, l := range listeners {
		fmt.Printf("forwarding 127.0.0.1:%s in %s to 127.0.0.1:%s\n", os.Args[2+i], os.Args[1], os.Args[2+i])
		go serve(l, "127.0.0.1:"+os.Args[2+i])
	}
	select {}
}
