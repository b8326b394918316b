package main

import (
	"context"
	"errors"
)

// runRepair is `crawl repair`.
func (m *Main) runRepair(ctx context.Context, args []string) error {
	return errors.New("repair: not built yet")
}
