package holdshelf

import (
	"errors"
	"regexp"
	"strings"
)

// TagKeys makes UpdateQueue change only these tags (the update_mask path
// tags.<key>, AIP-161): each is set to its value in the config's Tags, or
// removed when Tags lacks it, and every other tag keeps its value, even one
// another caller changes at the same time. It goes alone or beside Fields,
// which then may not name FieldTags; either is an error before any call,
// and so is naming no key. The tag limits apply to the tags that result.
// Needs a 0.2.0 broker.
func TagKeys(keys ...string) UpdateOption {
	return func(s *updateSettings) error {
		if len(keys) == 0 {
			return errors.New("holdshelf: TagKeys needs at least one tag key")
		}
		s.tagKeys = keys
		return nil
	}
}

// bareKey is a key written as it is in a path; any other key (dots, dashes,
// spaces, a leading digit, empty) goes in backticks.
var bareKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// tagKeyPath is the update_mask path of one tag, as the broker reads it:
// bare when it can be, else in backticks with each backtick doubled (AIP-161
// fixes no escape; doubling is the rule of SQL's quoted names).
func tagKeyPath(key string) string {
	if bareKey.MatchString(key) {
		return "tags." + key
	}
	return "tags.`" + strings.ReplaceAll(key, "`", "``") + "`"
}
