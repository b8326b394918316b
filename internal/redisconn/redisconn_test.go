package redisconn

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestCheckVersion(t *testing.T) {
	errOld := errors.New("old")
	for _, c := range []struct {
		info string
		ok   bool
	}{
		{"# Server\r\nredis_version:7.0.15\r\n", true},
		{"# Server\r\nredis_version:8.2.1\r\n", true},
		{"# Server\r\nredis_version:6.2.14\r\n", false},
		{"# Server\r\nredis_version:x\r\n", false},
		{"# Server\r\n", false},
	} {
		err := checkVersion(c.info, errOld)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, errOld) {
			t.Errorf("checkVersion(%q) = %v, want ok=%v (else wrapping the given error)", c.info, err, c.ok)
		}
	}
}

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{io.EOF, true},
		{errors.New("LOADING Redis is loading the dataset in memory"), true},
		{errors.New("CLUSTERDOWN The cluster is down"), true},
		{redis.ErrClosed, false},
		{errors.New("ERR wrong number of arguments"), false},
	} {
		if got := Transient(c.err); got != c.want {
			t.Errorf("Transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestInfoField(t *testing.T) {
	info := "# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\n"
	for _, c := range []struct {
		name, want string
		ok         bool
	}{
		{"used_memory", "1048576", true},
		{"used_memory_human", "1.00M", true},
		{"used_memory_peak", "", false},
		{"used", "", false},
	} {
		if got, ok := InfoField(info, c.name); got != c.want || ok != c.ok {
			t.Errorf("InfoField(%q) = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
