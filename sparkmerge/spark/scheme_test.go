package spark

import "testing"

// A listed path is named the way the user wrote its root: Spark's file:
// goes for a plain path (or stays file://), Databricks' dbfs: goes for a
// plain path (a Unity Catalog volume is listed as dbfs:/Volumes/...) and
// stays when the user wrote dbfs:; other schemes stay.
func TestSameScheme(t *testing.T) {
	tests := []struct{ given, listed, want string }{
		{"/data/in", "file:/data/in/a.csv", "/data/in/a.csv"},
		{"/data/in", "file:///data/in/a.csv", "/data/in/a.csv"},
		{"file:///data/in", "file:/data/in/a.csv", "file:///data/in/a.csv"},
		{"/Volumes/c/s/v/in", "dbfs:/Volumes/c/s/v/in/a.csv", "/Volumes/c/s/v/in/a.csv"},
		{"/Volumes/c/s/v/in/*.csv", "dbfs:/Volumes/c/s/v/in/a.csv", "/Volumes/c/s/v/in/a.csv"},
		{"dbfs:/mnt/in", "dbfs:/mnt/in/a.csv", "dbfs:/mnt/in/a.csv"},
		{"DBFS:/mnt/in", "dbfs:/mnt/in/a.csv", "dbfs:/mnt/in/a.csv"},
		{"s3a://b/in", "s3a://b/in/a.csv", "s3a://b/in/a.csv"},
		{"s3a://b/in", "dbfs:/odd/a.csv", "dbfs:/odd/a.csv"},
	}
	for _, tt := range tests {
		if got := sameScheme(tt.given, tt.listed); got != tt.want {
			t.Errorf("sameScheme(%q, %q) = %q, want %q", tt.given, tt.listed, got, tt.want)
		}
	}
}
