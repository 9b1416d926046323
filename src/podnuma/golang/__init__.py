"""Go behaviours whose bytes podnuma must match: strconv number formatting, encoding/json, go-spew dumps, FNV hashes."""
