package main

import (
	"context"
	"log/slog"
)

// lazyAttrs defers a logger's With attributes until a record is actually written.
//
// FerretDB's SQL layer calls Logger.With(query, args) before every statement only to log at
// debug level; slog's TextHandler formats those attributes eagerly, which quoted every
// document's JSON on every write and cost about a tenth of the server's CPU at warn level.
type lazyAttrs struct {
	inner slog.Handler
	steps []func(slog.Handler) slog.Handler
}

func newLazyAttrs(inner slog.Handler) slog.Handler {
	return lazyAttrs{inner: inner}
}

func (h lazyAttrs) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h lazyAttrs) Handle(ctx context.Context, record slog.Record) error {
	handler := h.inner
	for _, step := range h.steps {
		handler = step(handler)
	}
	return handler.Handle(ctx, record)
}

func (h lazyAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return h.then(func(next slog.Handler) slog.Handler { return next.WithAttrs(attrs) })
}

func (h lazyAttrs) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.then(func(next slog.Handler) slog.Handler { return next.WithGroup(name) })
}

func (h lazyAttrs) then(step func(slog.Handler) slog.Handler) lazyAttrs {
	steps := make([]func(slog.Handler) slog.Handler, len(h.steps), len(h.steps)+1)
	copy(steps, h.steps)
	return lazyAttrs{inner: h.inner, steps: append(steps, step)}
}
