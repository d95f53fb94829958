package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

const tagPrefix = "tag-"

// Tag is a named copy of a snapshot's metadata, <table>/tag/tag-<name>,
// which keeps that snapshot's files alive across expiration
// (apache/paimon paimon-core/src/main/java/org/apache/paimon/tag/Tag.java).
type Tag struct {
	Name     string
	Snapshot *Snapshot
	// CreateTime is the raw "tagCreateTime" (Jackson's LocalDateTime array,
	// e.g. [2024,5,30,12,0,0,123000000]) or nil.
	CreateTime json.RawMessage
	// TimeRetained is the raw "tagTimeRetained" (seconds, e.g.
	// 86400.000000000) or nil.
	TimeRetained json.RawMessage
}

// TagManager reads the tags of one table.
type TagManager struct {
	fio       storage.FileIO
	tablePath string
}

// NewTagManager returns the tag manager of the table at tablePath.
func NewTagManager(fio storage.FileIO, tablePath string) *TagManager {
	return &TagManager{fio: fio, tablePath: strings.TrimSuffix(tablePath, "/")}
}

// Dir is the table's tag directory.
func (t *TagManager) Dir() string { return path.Join(t.tablePath, "tag") }

// Path is the file of tag name.
func (t *TagManager) Path(name string) string { return t.Dir() + "/" + tagPrefix + name }

// Get reads tag name; a missing tag gives ErrTagNotFound and a file that is
// not a snapshot ErrInvalidSnapshot.
func (t *TagManager) Get(ctx context.Context, name string) (*Tag, error) {
	if name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("read tag %q: %w", name, ErrTagNotFound)
	}
	p := t.Path(name)
	data, err := t.fio.ReadFile(ctx, p)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, fmt.Errorf("read tag %s: %w: %w", p, ErrTagNotFound, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read tag %s: %w", p, err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("read tag %s: %w", p, err)
	}
	tag := &Tag{Name: name, Snapshot: s}
	tag.CreateTime, _ = s.Extra("tagCreateTime")
	tag.TimeRetained, _ = s.Extra("tagTimeRetained")
	return tag, nil
}

// List reads every tag, ordered by snapshot id and then name (the order of
// TagManager.tags()). Tags deleted while listing are skipped; hidden
// temporary files are ignored.
func (t *TagManager) List(ctx context.Context) ([]Tag, error) {
	infos, err := t.fio.List(ctx, t.Dir(), false)
	if err != nil {
		return nil, fmt.Errorf("list tags of %s: %w", t.tablePath, err)
	}
	var out []Tag
	for _, fi := range infos {
		name, ok := strings.CutPrefix(path.Base(fi.Path), tagPrefix)
		if fi.IsDir || !ok || name == "" {
			continue
		}
		tag, err := t.Get(ctx, name)
		if errors.Is(err, ErrTagNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *tag)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Snapshot.ID != out[j].Snapshot.ID {
			return out[i].Snapshot.ID < out[j].Snapshot.ID
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}
