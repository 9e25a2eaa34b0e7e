package corba

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/seatml/seat/adaptors/openrtm/omnitest"
)

func TestMain(m *testing.M) {
	// Every Encoder records its padding, so that tests can compare with
	// omniORB's bytes, which leave garbage there.
	recordPadding = true
	if dir, _ := openrtmDir(); missing(dir) != nil && required() == "" {
		fmt.Fprintf(os.Stderr, "NOTE: the tests against the captured GIOP vectors are skipped: %v; set %s to the directory of the OpenRTM material\n", missing(dir), openrtmEnv)
	}
	code := m.Run()
	removeCxx() // the C++ programs built for the tests against omniORB
	os.Exit(code)
}

// openrtmEnv names the directory of the shared OpenRTM material (idl/,
// wire/vectors/).
const openrtmEnv = omnitest.SharedEnv

// openrtmDir is the shared OpenRTM material's directory; explicit when
// $SEAT_OPENRTM names it.
func openrtmDir() (dir string, explicit bool) {
	return omnitest.SharedDir(), os.Getenv(openrtmEnv) != ""
}

func missing(dir string) error {
	_, err := os.Stat(filepath.Join(dir, "wire", "vectors", "vectors.json"))
	return err
}

// required says why missing vectors fail the tests ("" when they skip).
func required() string { return omnitest.SharedRequired() }

// vector is one captured GIOP message with what vectors.json says of it.
type vector struct {
	Name    string
	Bytes   []byte // the .bin file
	Payload []byte // the .payload.bin file, if any
	Want    jsonVector
}

type jsonVector struct {
	Vector           string
	GIOPVersion      string `json:"giop_version"`
	Flags            byte
	ByteOrder        string  `json:"byte_order"`
	MoreFragments    bool    `json:"more_fragments"`
	MessageType      string  `json:"message_type"`
	MessageSize      uint32  `json:"message_size"`
	RequestID        *uint32 `json:"request_id"`
	ResponseFlags    *byte   `json:"response_flags"`
	TargetAddressing string  `json:"target_addressing"`
	ObjectKey        string  `json:"object_key"`
	Operation        string
	ServiceContext   []struct {
		ContextID string `json:"context_id"`
		Length    int
		Data      string
		CodeSets  *struct {
			CharData  string `json:"char_data"`
			WcharData string `json:"wchar_data"`
		}
	} `json:"service_context"`
	BodyOffset   *int    `json:"body_offset"`
	ReplyStatus  string  `json:"reply_status"`
	LocateStatus *uint32 `json:"locate_status"`
	LocateName   string  `json:"locate_status_name"`
	Body         json.RawMessage
}

// loadVectors reads every vector, failing or skipping the test when they
// are missing (see required).
func loadVectors(t testing.TB) []vector {
	t.Helper()
	dir, _ := openrtmDir()
	if err := missing(dir); err != nil {
		if why := required(); why != "" {
			t.Fatalf("the captured GIOP vectors are missing (%v), and they are required (%s); set %s", err, why, openrtmEnv)
		}
		t.Skipf("the captured GIOP vectors are not here (%v); set %s to the OpenRTM material's directory", err, openrtmEnv)
	}
	vs, err := readVectors(filepath.Join(dir, "wire", "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func readVectors(dir string) ([]vector, error) {
	js, err := os.ReadFile(filepath.Join(dir, "vectors.json"))
	if err != nil {
		return nil, err
	}
	var wants []jsonVector
	if err := json.Unmarshal(js, &wants); err != nil {
		return nil, fmt.Errorf("vectors.json: %w", err)
	}
	bins, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
	described := map[string]bool{}
	var vs []vector
	for _, w := range wants {
		b, err := os.ReadFile(filepath.Join(dir, w.Vector+".bin"))
		if err != nil {
			return nil, err
		}
		v := vector{Name: w.Vector, Bytes: b, Want: w}
		if p, err := os.ReadFile(filepath.Join(dir, w.Vector+".payload.bin")); err == nil {
			v.Payload = p
		}
		vs = append(vs, v)
		described[w.Vector] = true
	}
	// Every .bin file is a vector that vectors.json describes.
	for _, b := range bins {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(b), ".bin"), ".payload")
		if !described[name] {
			return nil, fmt.Errorf("%s: not in vectors.json", b)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
	return vs, nil
}
