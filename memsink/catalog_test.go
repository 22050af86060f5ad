package memsink_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestCatalog(t *testing.T) {
	mem := vt.NewAllocator(t)
	a := newTable(t, mem, arrowstream.SinkInfo{QueryName: "Clicks"}, memsink.Options{})
	b := newTable(t, mem, arrowstream.SinkInfo{QueryName: "views"}, memsink.Options{})
	c := memsink.NewCatalog()
	if err := c.Register("Clicks", a); err != nil {
		t.Fatal(err)
	}
	if err := c.Register("CLICKS", b); !errors.Is(err, memsink.ErrNameTaken) {
		t.Errorf("duplicate name: %v", err)
	}
	if err := c.Register("", b); err == nil {
		t.Error("empty name accepted")
	}
	if err := c.Register("views", b); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Lookup("clicks"); !ok || got != a {
		t.Errorf("Lookup(clicks) = %v, %v", got, ok)
	}
	if fmt.Sprint(c.List()) != "[Clicks views]" {
		t.Errorf("List = %v", c.List())
	}
	if old, err := c.Replace("VIEWS", a); err != nil || old != b {
		t.Errorf("Replace = %v, %v", old, err)
	}
	if got, ok := c.Drop("views"); !ok || got != a {
		t.Errorf("Drop = %v, %v", got, ok)
	}
	if _, ok := c.Lookup("views"); ok {
		t.Error("dropped name still found")
	}
	if _, ok := c.Drop("views"); ok {
		t.Error("second Drop found the name")
	}
}

func TestCatalogConcurrent(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{}, memsink.Options{})
	c := memsink.NewCatalog()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				name := fmt.Sprintf("t%d", i%10)
				c.Replace(name, tbl)
				c.Lookup(name)
				c.List()
				if i%3 == 0 {
					c.Drop(name)
				}
			}
		}()
	}
	wg.Wait()
}
