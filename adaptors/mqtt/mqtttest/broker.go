// Package mqtttest runs Debian's mosquitto for tests: a real broker on a
// free loopback port, with persistence, stopped and restarted at will. It
// is used by tests only.
package mqtttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Broker is a running mosquitto.
type Broker struct {
	t    testing.TB
	dir  string
	Port string
	URL  string // tcp://127.0.0.1:PORT
	// TLSURL and CAFile are set when Options.TLS asked for a TLS
	// listener: mqtts://127.0.0.1:PORT, verified with the CA in CAFile.
	TLSURL string
	CAFile string
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
	log    *os.File
}

// Options configure a broker.
type Options struct {
	// Users, if set, turns anonymous access off and lets these users in
	// (name to password).
	Users map[string]string
	// TLS adds a TLS listener with a certificate for 127.0.0.1 from a CA
	// made for the test.
	TLS bool
}

// Path finds mosquitto: on PATH, else where Debian puts it. Without it
// the test is skipped, unless SEAT_REQUIRE_TOOLS is set (as .ci/run does):
// then it fails.
func Path(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/mosquitto"); err == nil {
		return "/usr/sbin/mosquitto"
	}
	if os.Getenv("SEAT_REQUIRE_TOOLS") != "" {
		t.Fatal("mosquitto is not installed and SEAT_REQUIRE_TOOLS is set (apt-get install mosquitto)")
	}
	t.Skip("mosquitto is not installed (apt-get install mosquitto)")
	return ""
}

// Start starts a broker on a free loopback port; it stops with the test.
func Start(t testing.TB, opts Options) *Broker {
	t.Helper()
	Path(t) // skips or fails the test when mosquitto is missing
	dir := t.TempDir()
	// A free port can be taken by another process between the probe and
	// mosquitto's bind (tests run in parallel): then new ports are tried.
	for attempt := 1; ; attempt++ {
		b, conf := configure(t, dir, opts)
		if err := os.WriteFile(filepath.Join(dir, "mosquitto.conf"), []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := b.start()
		if err == nil {
			t.Cleanup(b.Stop)
			return b
		}
		if !errors.Is(err, errInUse) || attempt == 5 {
			t.Fatal(err)
		}
	}
}

// errInUse is a broker that exited because its port was taken.
var errInUse = errors.New("address already in use")

// configure picks ports and writes the configuration lines of a broker.
func configure(t testing.TB, dir string, opts Options) (*Broker, []string) {
	port := freePort(t)
	conf := []string{
		"listener " + port + " 127.0.0.1",
		"persistence true",
		"persistence_location " + dir + "/",
		"autosave_interval 1",
		"log_dest stderr",
		"log_type error",
		"log_type warning",
		"log_type notice",
		"max_queued_messages 100000",
	}
	if os.Geteuid() == 0 {
		// As root mosquitto would switch to its own user, which cannot
		// read the test's directory; "root" keeps it as it is.
		conf = append(conf, "user root")
	}
	if len(opts.Users) == 0 {
		conf = append(conf, "allow_anonymous true")
	} else {
		pw := filepath.Join(dir, "passwords")
		tool, err := exec.LookPath("mosquitto_passwd")
		if err != nil {
			tool = "/usr/bin/mosquitto_passwd"
		}
		first := true
		for user, pass := range opts.Users {
			args := []string{"-b", pw, user, pass}
			if first {
				args = append([]string{"-c"}, args...)
				first = false
			}
			if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
				t.Fatalf("mosquitto_passwd: %v\n%s", err, out)
			}
		}
		conf = append(conf, "allow_anonymous false", "password_file "+pw)
	}
	b := &Broker{t: t, dir: dir, Port: port, URL: "tcp://127.0.0.1:" + port}
	if opts.TLS {
		tport := freePort(t)
		ca, cert, key := makeCerts(t, dir)
		conf = append(conf, "listener "+tport+" 127.0.0.1", "cafile "+ca, "certfile "+cert, "keyfile "+key)
		b.TLSURL, b.CAFile = "mqtts://127.0.0.1:"+tport, ca
	}
	return b, conf
}

// Restart starts the broker again (after Stop) with the same port and
// persistence, and waits until it accepts connections.
func (b *Broker) Restart() {
	b.t.Helper()
	if err := b.start(); err != nil {
		b.t.Fatal(err)
	}
}

// start runs mosquitto and waits until it accepts connections; errInUse
// if it exited because its port is taken.
func (b *Broker) start() error {
	bin := Path(b.t)
	log, err := os.OpenFile(filepath.Join(b.dir, "mosquitto.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	b.log = log
	b.cmd = exec.Command(bin, "-c", filepath.Join(b.dir, "mosquitto.conf"))
	b.cmd.Stdout, b.cmd.Stderr = log, log
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		return fmt.Errorf("start mosquitto: %w", err)
	}
	exited := make(chan struct{})
	b.exited = exited
	go func(cmd *exec.Cmd) { cmd.Wait(); close(exited) }(b.cmd)
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-exited:
			b.cmd = nil
			b.log.Close()
			if strings.Contains(b.Log(), "Address already in use") {
				os.Remove(filepath.Join(b.dir, "mosquitto.log"))
				return errInUse
			}
			return fmt.Errorf("mosquitto exited at start:\n%s", b.Log())
		default:
		}
		c, err := net.Dial("tcp", "127.0.0.1:"+b.Port)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mosquitto did not listen on %s within 20s:\n%s", b.Port, b.Log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop stops the broker (SIGTERM: it saves its persistent sessions).
func (b *Broker) Stop() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	b.cmd.Process.Signal(syscall.SIGCONT) // a paused broker would not see SIGTERM
	b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-b.exited
	}
	b.cmd = nil
	b.log.Close()
}

// Pause stops the broker's process (SIGSTOP) with its connections still
// open: a broker that hangs, which only a keep-alive can tell from a slow
// one. Resume (or Stop) lets it go on.
func (b *Broker) Pause() {
	b.t.Helper()
	if err := b.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		b.t.Fatalf("pause mosquitto: %v", err)
	}
}

// Resume continues a paused broker.
func (b *Broker) Resume() {
	b.t.Helper()
	if err := b.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		b.t.Fatalf("resume mosquitto: %v", err)
	}
}

// Log returns what the broker logged.
func (b *Broker) Log() string {
	data, _ := os.ReadFile(filepath.Join(b.dir, "mosquitto.log"))
	return string(data)
}

func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// makeCerts writes a CA and a certificate for 127.0.0.1 signed by it.
func makeCerts(t testing.TB, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "seat test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	caCert, _ := x509.ParseCertificate(caDER)
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(srvKey)
	ca, cert, key = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	write := func(path, typ string, der []byte) {
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(ca, "CERTIFICATE", caDER)
	write(cert, "CERTIFICATE", srvDER)
	write(key, "EC PRIVATE KEY", keyDER)
	return ca, cert, key
}
