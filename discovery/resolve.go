package discovery

import (
	"slices"

	"github.com/switchyard-go/switchyard/provider/registry"
)

// Step names the source that answered a resolution.
type Step string

// The steps of Resolve, in the order it tries them.
const (
	StepDirectURL      Step = "directUrl"      // Sources.DirectURL
	StepDirectRegistry Step = "directRegistry" // an entry of Sources.DirectURLs
	StepDiscovery      Step = "discovery"      // usable discovered instances
	StepStaticTargets  Step = "staticTargets"  // Sources.Static
	StepNone           Step = "none"           // nothing answered
)

// Sources are the ways Resolve may find targets for a query.
type Sources struct {
	// DirectURL, when set, is the only target, whatever else is known.
	DirectURL string
	// DirectURLs are fixed URLs keyed "serviceId|envTag" or "serviceId"
	// (a direct registry); see DirectKeys for the order of lookup.
	DirectURLs map[string]string
	// Discovered are the DiscoverySnapshots to take usable instances from
	// (see Query.Usable); those of other services are ignored.
	Discovered []*registry.DiscoverySnapshot
	// Static are the targets of last resort.
	Static []string
}

// Resolution is the answer of Resolve.
type Resolution struct {
	// Step is the source that answered; StepNone when none did.
	Step Step
	// Key is the DirectURLs key that answered, for StepDirectRegistry;
	// empty otherwise.
	Key string
	// Targets are sorted by URL and distinct; empty for StepNone.
	Targets []Target
}

// Resolve finds the targets of q, trying in order: s.DirectURL; the direct
// URLs keyed by DirectKeys(q.ServiceID, q.EnvTag); the usable discovered
// instances; s.Static. The first source that has a target answers, and
// the Resolution says which. Resolve checks no URL: its caller validates
// its configuration.
func Resolve(q Query, s Sources) Resolution {
	if s.DirectURL != "" {
		return Resolution{Step: StepDirectURL, Targets: []Target{{URL: s.DirectURL}}}
	}
	for _, k := range DirectKeys(q.ServiceID, q.EnvTag) {
		if u, ok := s.DirectURLs[k]; ok && u != "" {
			return Resolution{Step: StepDirectRegistry, Key: k, Targets: []Target{{URL: u}}}
		}
	}
	if t := q.Targets(s.Discovered...); len(t) > 0 {
		return Resolution{Step: StepDiscovery, Targets: t}
	}
	if len(s.Static) > 0 {
		urls := slices.Clone(s.Static)
		slices.Sort(urls)
		urls = slices.Compact(urls)
		t := make([]Target, len(urls))
		for i, u := range urls {
			t[i] = Target{URL: u}
		}
		return Resolution{Step: StepStaticTargets, Targets: t}
	}
	return Resolution{Step: StepNone}
}

// DirectKeys returns the keys of a direct registry that name serviceID,
// most specific first: "serviceId|envTag" then "serviceId" when envTag is
// set, "serviceId" alone otherwise.
func DirectKeys(serviceID, envTag string) []string {
	if envTag == "" {
		return []string{serviceID}
	}
	return []string{serviceID + "|" + envTag, serviceID}
}
