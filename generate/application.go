package generate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// contribution is what one generator made for an application, normalized.
type contribution struct {
	module    string
	resources []Resource
	patches   []patch
}

// generate is the translator.Derive function: it makes one application's
// resources from its job. It returns an error, keeping the application's
// last published resources, when anything fails.
func (g *Generation[K]) generate(ctx context.Context, k K, j *job) (map[Key[K]]Resource, error) {
	app := j.app
	if j.missing {
		return nil, fmt.Errorf("%w %q", ErrUnknownWorkspace, app.Workspace)
	}
	modules := slices.Sorted(maps.Keys(app.Accessories))
	for _, m := range modules {
		if _, ok := g.generators[m]; !ok {
			return nil, fmt.Errorf("accessory %q: %w", m, ErrUnknownModule)
		}
	}

	// The inputs are normalized once, and every generator gets copies of
	// its own (normalizing shares what is JSON already with the inputs).
	workload, err := jsonObject(app.Workload)
	if err != nil {
		return nil, fmt.Errorf("workload configuration: %w", err)
	}
	runtime, err := jsonObject(j.runtime)
	if err != nil {
		return nil, fmt.Errorf("runtime configuration: %w", err)
	}
	request := func(module string, dev Config) (Request, error) {
		platform, err := jsonObject(j.platform[module])
		if err != nil {
			return Request{}, fmt.Errorf("platform configuration of module %q: %w", module, err)
		}
		return Request{
			Project:        app.Project,
			Stack:          app.Stack,
			App:            app.Name,
			Workload:       copyObject(workload),
			DevConfig:      copyObject(dev),
			PlatformConfig: copyObject(platform),
			RuntimeConfig:  copyObject(runtime),
		}, nil
	}

	// The workload first: the others may read what it made.
	req, err := request(WorkloadModule, workload)
	if err != nil {
		return nil, err
	}
	base, err := call(ctx, WorkloadModule, g.workload, req)
	if err != nil {
		return nil, err
	}
	target, err := findWorkload(base.resources)
	if err != nil {
		return nil, &GeneratorError{Module: WorkloadModule, Err: err}
	}
	contributions := []contribution{base}

	var errs []error
	for _, m := range modules {
		dev, err := jsonObject(app.Accessories[m])
		if err != nil {
			errs = append(errs, fmt.Errorf("accessory %q: %w", m, err))
			continue
		}
		req, err := request(m, dev)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		req.WorkloadResources = slices.Clone(base.resources) // the objects are shared, read-only
		c, err := call(ctx, m, g.generators[m], req)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, r := range c.resources {
			if r.Workload {
				errs = append(errs, &GeneratorError{Module: m, Err: fmt.Errorf("%w: resource %q is marked as the workload, which only the workload generator may do", ErrInvalidResource, r.ID)})
			}
		}
		contributions = append(contributions, c)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}

	resources, err := collect(contributions)
	if err != nil {
		return nil, err
	}
	if resources[target], err = patchWorkload(resources[target], contributions); err != nil {
		return nil, err
	}

	out := make(map[Key[K]]Resource, len(resources))
	for _, r := range resources {
		out[Key[K]{App: k, ID: r.ID}] = r
	}
	return out, nil
}

// call runs one generator and normalizes its response. A generator's panic
// goes on to the translator, which recovers it, reports it with its stack
// and keeps the application's last output; it is wrapped on the way so that
// the report names the generator.
func call(ctx context.Context, module string, gen Generator, req Request) (c contribution, err error) {
	defer func() {
		if p := recover(); p != nil {
			panic(generatorPanic{module: module, value: p})
		}
	}()
	resp, err := gen.Generate(ctx, req)
	if err != nil {
		return contribution{}, &GeneratorError{Module: module, Err: err}
	}
	c = contribution{module: module}
	for i, r := range resp.Resources {
		obj, err := jsonObject(r.Object)
		if err != nil {
			return contribution{}, &GeneratorError{Module: module, Err: fmt.Errorf("%w %d: %w", ErrInvalidResource, i, err)}
		}
		if r.ID == "" {
			if r.ID = ObjectID(obj); r.ID == "" {
				return contribution{}, &GeneratorError{Module: module, Err: fmt.Errorf("%w %d: no ID, and no apiVersion, kind and metadata.name to make one from", ErrInvalidResource, i)}
			}
		}
		c.resources = append(c.resources, Resource{ID: r.ID, Workload: r.Workload, Object: obj})
	}
	for i, p := range resp.Patchers {
		n, err := normalizePatch(p)
		if err != nil {
			return contribution{}, &GeneratorError{Module: module, Err: fmt.Errorf("%w: patcher %d: %w", ErrPatch, i, err)}
		}
		c.patches = append(c.patches, n)
	}
	return c, nil
}

// generatorPanic is what a panicking generator's panic becomes: the
// translator reports its text, which names the generator.
type generatorPanic struct {
	module string
	value  any
}

func (p generatorPanic) String() string {
	return fmt.Sprintf("generator %q: %v", p.module, p.value)
}

// findWorkload returns the index of the workload among the workload
// generator's resources: the only one, or the one marked.
func findWorkload(resources []Resource) (int, error) {
	if len(resources) == 1 {
		resources[0].Workload = true
		return 0, nil
	}
	found := -1
	for i, r := range resources {
		if !r.Workload {
			continue
		}
		if found >= 0 {
			return 0, fmt.Errorf("%w: resources %q and %q are both marked as the workload", ErrNoWorkload, resources[found].ID, r.ID)
		}
		found = i
	}
	switch {
	case len(resources) == 0:
		return 0, fmt.Errorf("%w: the workload generator produced no resources", ErrNoWorkload)
	case found < 0:
		return 0, fmt.Errorf("%w: %d resources and none marked as the workload", ErrNoWorkload, len(resources))
	}
	return found, nil
}

// collect returns the resources of every contribution in order, the
// workload generator's first. Two generators producing one ID conflict
// unless the contents are equal; a generator producing one ID twice is
// invalid.
func collect(contributions []contribution) ([]Resource, error) {
	var out []Resource
	at := make(map[string]int)    // ID → index in out
	by := make(map[string]string) // ID → module
	var errs []error
	for _, c := range contributions {
		mine := make(map[string]bool, len(c.resources))
		for _, r := range c.resources {
			if mine[r.ID] {
				errs = append(errs, &GeneratorError{Module: c.module, Err: fmt.Errorf("%w: resource %q produced twice", ErrInvalidResource, r.ID)})
				continue
			}
			mine[r.ID] = true
			if i, ok := at[r.ID]; ok {
				if !objectsEqual(out[i].Object, r.Object) {
					key := fmt.Sprintf("resource %q", r.ID)
					errs = append(errs, &ConflictError{
						Generators: [2]string{by[r.ID], c.module},
						Keys:       [2]string{key, key},
						Values:     [2]any{out[i].Object, r.Object},
					})
				}
				continue
			}
			at[r.ID], by[r.ID] = len(out), c.module
			out = append(out, r)
		}
	}
	return out, joinErrors(errs)
}

// patchWorkload checks the patches of every contribution against each
// other and applies them, in order, to a copy of the workload, which it
// returns. The generators' objects are left as they are: the other
// generators saw them as the workload generator made them.
func patchWorkload(workload Resource, contributions []contribution) (Resource, error) {
	patching := 0
	for _, c := range contributions {
		if len(c.patches) > 0 {
			patching++
		}
	}
	if patching == 0 {
		return workload, nil
	}
	if patching > 1 { // one generator cannot conflict with itself
		var all []claim
		for _, c := range contributions {
			all = append(all, claims(c.module, c.patches)...)
		}
		if errs := conflicts(all); len(errs) > 0 {
			return Resource{}, joinErrors(errs)
		}
	}
	workload.Object = copyObject(workload.Object)
	id := ObjectID(workload.Object)
	for _, c := range contributions {
		for i, p := range c.patches {
			if err := p.apply(workload.Object); err != nil {
				return Resource{}, &GeneratorError{Module: c.module, Err: fmt.Errorf("patcher %d: %w", i, err)}
			}
			if now := ObjectID(workload.Object); now != id {
				return Resource{}, &GeneratorError{Module: c.module, Err: fmt.Errorf("patcher %d: %w: it changes the workload's apiVersion, kind, namespace or name (%q to %q)", i, ErrPatch, id, now)}
			}
		}
	}
	return workload, nil
}

// joinErrors is errors.Join, except that one error is returned as it is.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
