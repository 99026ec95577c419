package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestChildNamed_FindsAChildByItsExecutablesName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	// A symlink is not what /proc/PID/exe shows: the real file's name is.
	sleep, err = filepath.EvalSymlinks(sleep)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sleep, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	name := filepath.Base(sleep)
	if got := ChildNamed(os.Getpid(), name); got != cmd.Process.Pid {
		t.Errorf("ChildNamed(this process, %q) = %d, want %d", name, got, cmd.Process.Pid)
	}
	if got := ChildNamed(os.Getpid(), name+"-not"); got != 0 {
		t.Errorf("a name no child has gave pid %d", got)
	}
	if !Alive(cmd.Process.Pid) {
		t.Error("the running child is not alive")
	}
	if err := Kill(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if Alive(cmd.Process.Pid) {
		t.Error("a killed and reaped child is alive")
	}
}
