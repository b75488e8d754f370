// Command engram-ferretdb runs FerretDB v1 with its SQLite backend as Engram's local
// MongoDB wire-protocol server. It embeds the library instead of building FerretDB's own
// command, whose module release lacks the version file that command needs at start.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dataDir := flag.String("data", "data", "directory that holds one SQLite file per database")
	logLevel := flag.String("log-level", "warn", "one of debug, info, warn, error")
	gcPercent := flag.Int("gc-percent", 400, "Go GC target (GOGC); the server's live heap is small, "+
		"and the default 100 spent about an eighth of its CPU collecting")
	flag.Parse()
	debug.SetGCPercent(*gcPercent)

	if err := run(*listen, *dataDir, *logLevel); err != nil {
		fmt.Fprintln(os.Stderr, "engram-ferretdb:", err)
		os.Exit(1)
	}
}

func run(listen, dataDir, logLevel string) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("bad -log-level %q: %w", logLevel, err)
	}

	absDir, err := filepath.Abs(dataDir)
	if err != nil {
		return fmt.Errorf("bad -data %q: %w", dataDir, err)
	}
	if err := os.MkdirAll(absDir, 0o755); err != nil {
		return fmt.Errorf("cannot create data directory: %w", err)
	}

	logger := slog.New(newLazyAttrs(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	server, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + absDir + "/",
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fmt.Fprintf(os.Stderr, "engram-ferretdb: serving %s from %s\n", listen, absDir)
	if err := server.Run(ctx); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return err
	}
	return nil
}
