// Package admin provides the HTTP handlers of a program's admin listener:
// what its watchable maps hold (Maps, for /debug/maps), whether it is ready
// (Readiness, for /readyz), and the status of each of its runners (Runners,
// for /debug/runners). They are plain http.Handlers: mount them on the mux
// of the admin server, with whatever else it serves (metrics, profiles).
//
//	maps := admin.NewMaps()
//	admin.AddMap(maps, "routes", routes.Output(), func(k string) string { return k })
//	mux := http.NewServeMux()
//	mux.Handle("GET /debug/maps", maps)
//	mux.Handle("GET /readyz", admin.Readiness(group.Status()))
//	mux.Handle("GET /debug/runners", admin.Runners(group.Status()))
//
// Every answer is JSON. The handlers read the maps through their Views, in
// O(1) per map plus the entries they show, and never write to them. The
// contents /debug/maps shows are bounded per map (WithMaxEntries), so that
// the page stays cheap on a map of any size, and the values of fields whose
// names suggest a secret ("token", "password", ...) are masked.
//
// The pages show a program's internals: serve them on a listener of their
// own that only operators reach, not on the one that serves users.
package admin
