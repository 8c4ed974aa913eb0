package registry_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/sqpredict/sqpredict/registry"
)

func Example() {
	dir, err := os.MkdirTemp("", "registry-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	reg, err := registry.Open(dir)
	if err != nil {
		log.Fatal(err)
	}

	// The trainer writes its files and publishes them as the new champion.
	const schemaHash = "3f2a9c" // from the feature code in a real trainer
	writeModels := func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "success.json"), []byte(`{"w":[0.5]}`), 0o644)
	}
	end := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	manifest := registry.Manifest{
		TrainedAt:         end.Add(3 * time.Hour),
		Window:            registry.Window{From: end.AddDate(0, 0, -90), To: end},
		FeatureSchemaHash: schemaHash,
		Metrics:           map[string]float64{"success.auc": 0.8123},
		Extra:             map[string]string{"seed": "1"},
	}
	version, err := reg.Publish(context.Background(), "ios", writeModels, manifest,
		registry.PublishOptions{Champion: true})
	if err != nil {
		log.Fatal(err)
	}

	// The scorer loads the champion, verified against its own schema hash.
	champion, err := reg.Champion("ios")
	if err != nil {
		log.Fatal(err)
	}
	bundle, err := reg.Load("ios", champion, schemaHash)
	if err != nil {
		log.Fatal(err)
	}
	data, err := bundle.ReadFile("success.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("champion is the new version:", champion == version)
	fmt.Println("files:", bundle.Files())
	fmt.Printf("success.auc: %.4g\n", bundle.Manifest.Metrics["success.auc"])
	fmt.Println("success.json:", string(data))

	// A scorer built with other feature code refuses the bundle.
	_, err = reg.Load("ios", champion, "other-hash")
	fmt.Println(err != nil)
	// Output:
	// champion is the new version: true
	// files: [success.json]
	// success.auc: 0.8123
	// success.json: {"w":[0.5]}
	// true
}
