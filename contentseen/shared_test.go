package contentseen_test

import (
	"errors"
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
)

func TestSharedMem(t *testing.T) {
	contentseentest.RunShared(t, func(t testing.TB, o contentseen.SharedOptions, n int) []contentseen.Shared {
		x, err := contentseen.NewSharedMem(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := x.Close(); err != nil && !errors.Is(err, contentseen.ErrClosed) {
				t.Error(err)
			}
		})
		cs := make([]contentseen.Shared, n)
		for i := range cs {
			cs[i] = x
		}
		return cs
	})
}

func TestSharedOptionsValidate(t *testing.T) {
	for _, o := range []contentseen.SharedOptions{
		{K: -1}, {K: contentseen.DefaultLayout().MaxK() + 1}, {K: 3, Lease: -1}, {K: 3, MaxLag: -1},
	} {
		if _, err := contentseen.NewSharedMem(o); err == nil {
			t.Errorf("NewSharedMem(%+v): no error", o)
		}
	}
}
