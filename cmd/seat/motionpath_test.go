package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMotionByNameFromAnyDirectory: seat motion play and check find a
// script given by name in --scripts DIR alone when given, else in
// ./scripts, then ./examples/scripts, then seat's built-in copy of
// examples/scripts, so that seat motion play Nod works outside the
// repository; a name found nowhere is an error listing every path tried,
// with a suggestion (issue 21 #15). On the real binary, run in a temporary
// working directory.
func TestMotionByNameFromAnyDirectory(t *testing.T) {
	// The repository's own copy, played by path, is what the built-in copy must give.
	shipped, stderr, code := seatProcess(t, "", "motion", "play", "--sim-speed", "inf", "../../examples/scripts/Nod.yaml")
	if code != 0 || stderr != "" || !strings.HasPrefix(shipped, "time_ms,HeadPitch,HeadPitch_sensor\n") {
		t.Fatalf("seat motion play ../../examples/scripts/Nod.yaml: exit %d\n%s", code, stderr)
	}
	away := t.TempDir()
	if real, err := filepath.EvalSymlinks(away); err == nil {
		away = real // as the working directory is reported
	}
	stdout, stderr, code := seatProcess(t, away, "motion", "play", "Nod", "--sim-speed", "inf")
	if code != 0 || stderr != "" || stdout != shipped {
		t.Errorf("seat motion play Nod outside the repository: exit %d\n%s\n%.200s", code, stderr, stdout)
	}
	if _, stderr, code := seatProcess(t, away, "motion", "check", "Nod", "Wave", "KickRight"); code != 0 || stderr != "" {
		t.Errorf("seat motion check Nod Wave KickRight outside the repository: exit %d\n%s", code, stderr)
	}
	// A name found nowhere: every path tried, in order, and the closest name.
	_, stderr, code = seatProcess(t, away, "motion", "play", "Nodd")
	want := `seat motion play: no motion script "Nodd"; tried ` + filepath.Join(away, "scripts", "Nodd.yaml") + ", " +
		filepath.Join(away, "examples", "scripts", "Nodd.yaml") + `, <built-in>/Nodd.yaml; did you mean "Nod"?` + "\n"
	if code != 1 || stderr != want {
		t.Errorf("seat motion play Nodd: exit %d\n%s\nwant\n%s", code, stderr, want)
	}
	_, stderr, code = seatProcess(t, away, "motion", "check", "Nod", "Wavee")
	if code != 1 || !strings.HasPrefix(stderr, `seat motion check: no motion script "Wavee"; tried `) || !strings.HasSuffix(stderr, `; did you mean "Wave"?`+"\n") {
		t.Errorf("seat motion check Nod Wavee: exit %d\n%s", code, stderr)
	}
	// --scripts DIR alone is searched when given.
	_, stderr, code = seatProcess(t, away, "motion", "play", "--scripts", "mine", "Nod")
	if want := `seat motion play: no motion script "Nod"; tried ` + filepath.Join("mine", "Nod.yaml") + "\n"; code != 1 || stderr != want {
		t.Errorf("seat motion play --scripts mine Nod: exit %d\n%s\nwant\n%s", code, stderr, want)
	}

	// ./scripts comes first, then ./examples/scripts, then the built-in
	// copy; names and messages are Unicode.
	project := t.TempDir()
	if real, err := filepath.EvalSymlinks(project); err == nil {
		project = real
	}
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(project, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("scripts/Nod.yaml", "- {duration: 100, targets: [{id: HEAD_YAW, position: 0.5, gain: 10}]}\n")
	write("scripts/会釈.yaml", "# 会釈: a bow of the head\n- {duration: 200, targets: [{id: HEAD_PITCH, position: 0.2, gain: 10}]}\n")
	write("examples/scripts/Nod.yaml", "- {duration: 100, targets: [{id: L_SHOULDER_PITCH, position: 0.5, gain: 10}]}\n")
	write("examples/scripts/Wave.yaml", "- {duration: 100, targets: [{id: L_SHOULDER_PITCH, position: 0.5, gain: 10}]}\n")
	write("examples/scripts/壊れた.yaml", "- {duration: 100, targets: [{id: 首, position: 0.5, gain: 10}]}\n")
	for name, header := range map[string]string{
		"Nod":       "time_ms,HeadYaw,HeadYaw_sensor\n",               // ./scripts
		"Wave":      "time_ms,LShoulderPitch,LShoulderPitch_sensor\n", // ./examples/scripts
		"KickRight": "time_ms,",                                       // built in
		"会釈":        "time_ms,HeadPitch,HeadPitch_sensor\n",
	} {
		stdout, stderr, code := seatProcess(t, project, "motion", "play", name)
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, header) {
			t.Errorf("seat motion play %s in a project: exit %d\n%s\n%.200s", name, code, stderr, stdout)
		}
	}
	// The column counts characters: 首 is the 34th of its line.
	_, stderr, code = seatProcess(t, project, "motion", "check", "壊れた")
	if want := filepath.Join(project, "examples", "scripts", "壊れた.yaml") + `:1:34: unknown servo id "首"`; code != 1 || !strings.HasPrefix(stderr, want) {
		t.Errorf("seat motion check 壊れた: exit %d\n%s\nwant %s", code, stderr, want)
	}
	if _, stderr, code = seatProcess(t, project, "motion", "play", "会"); code != 1 || !strings.HasSuffix(stderr, `; did you mean "会釈"?`+"\n") {
		t.Errorf("seat motion play 会: exit %d\n%s", code, stderr)
	}
}

// TestBehaviorMotionByNameOutsideTheRepository: a behavior copied out of
// the repository finds its scripts by name where seat motion play does
// (scripts/ beside it, ./scripts, ./examples/scripts, then the built-in
// copy), in seat check, in <motion script> and in seat.motion at run; a
// name found nowhere lists every path tried, at check and at run. Before,
// the copy of reception.seatml failed with "no such file or directory
// (scripts directory examples/scripts)". On the real binary, in a
// temporary working directory.
func TestBehaviorMotionByNameOutsideTheRepository(t *testing.T) {
	away := t.TempDir()
	if real, err := filepath.EvalSymlinks(away); err == nil {
		away = real
	}
	src, err := os.ReadFile("../../examples/reception.seatml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(away, "reception.seatml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := seatProcess(t, away, "check", "reception.seatml"); code != 0 || stderr != "" {
		t.Errorf("seat check reception.seatml outside the repository: exit %d\n%s", code, stderr)
	}

	f := filepath.Join(away, "会釈.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="会釈"><adaptor name="係員" type="stdio"/></general>
<state name="待機">
  <rule><key>うなずいて</key><motion script="Nod"/><message sendto="係員">うなずいた</message></rule>
  <rule><key>手を振って</key><script>local h = seat.motion{scripts = "Wave"}; seat.reply("振る " .. h.name)</script></rule>
  <rule><key>回って</key><script>local ok, err = pcall(seat.motion, {scripts = "回転"}); seat.reply(tostring(err))</script></rule>
  <rule><key>終わり</key><script>seat.exit(0)</script></rule>
</state></seatml>
`), 0o644)
	stdout, stderr, code := seatProcessIn(t, away, "うなずいて\n手を振って\n回って\n終わり\n", "run", "--sim-speed", "inf", f)
	wantErr := `seat.motion: no motion script "回転"; tried ` + filepath.Join(away, "scripts", "回転.yaml") + ", " +
		filepath.Join(away, "examples", "scripts", "回転.yaml") + ", <built-in>/回転.yaml"
	if code != 0 || !strings.HasPrefix(stdout, "うなずいた\n振る Wave\n") || !strings.Contains(stdout, wantErr) {
		t.Errorf("seat run outside the repository: exit %d\nstdout:\n%s\nwant it to contain %s\nstderr:\n%s", code, stdout, wantErr, stderr)
	}

	// A <motion> name found nowhere: the paths tried and the closest name.
	os.WriteFile(f, []byte(`<seatml><general name="会釈"><adaptor name="係員" type="stdio"/></general>
<state name="待機">
  <rule><key>うなずいて</key><motion script="Nodd"/></rule>
</state></seatml>
`), 0o644)
	_, stderr, code = seatProcess(t, away, "check", f)
	want := f + `:3:41: <motion> script: no motion script "Nodd"; tried ` + filepath.Join(away, "scripts", "Nodd.yaml") + ", " +
		filepath.Join(away, "examples", "scripts", "Nodd.yaml") + `, <built-in>/Nodd.yaml; did you mean "Nod"?` + "\n"
	if code != 1 || stderr != want {
		t.Errorf("seat check with Nodd: exit %d\n%s\nwant\n%s", code, stderr, want)
	}
}
