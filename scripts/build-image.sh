#!/usr/bin/env bash
# build-image.sh: builds the local Spark Connect image of $SPARK_VERSION
# (default the main version, scripts/lib.sh), sparkmerge/spark-connect:<version>,
# or $SPARKMERGE_SPARK_IMAGE when set, without any container registry:
#   1. debootstrap a minimal Debian bookworm (mirror read from this machine's
#      apt sources) + openjdk-17-jre-headless      -> .cache/image/base-<hash>.tar
#   2. add the fetched Spark (with its Connect server jar) under /opt/spark,
#      the table format jars of its line (Delta Lake, Iceberg:
#      scripts/fetch-table-formats.sh) among Spark's jars, and the
#      entrypoint
#      /opt/sparkmerge/start-connect.sh            -> .cache/image/spark-connect-<hash>.tar
#   3. docker import it with the entrypoint and labels holding the input
#      hash and the table formats it carries (io.sparkmerge.table-formats,
#      "delta=4.0.1,iceberg=1.10.1" or "", which sparkmerge/localspark
#      reads to configure their catalogs).
#   4. start the server once on it with -XX:ArchiveClassesAtExit: the
#      classes its start loads, archived by the JVM when it stops (AppCDS)
#                                                  -> .cache/image/spark-connect-<hash>.jsa
#      and add the archive to the image, named by the label
#      io.sparkmerge.class-archive, which sparkmerge/localspark reads to
#      have the server's JVM map it (-XX:SharedArchiveFile): a start then
#      costs about half the CPU (docs/testing.md, "Where the time goes").
#      A dump that fails leaves the image without one, as before.
# Idempotent: an image whose label matches the inputs is left alone; the cached
# tarballs make a rebuild after `docker rmi` a plain import.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

image=$SPARKMERGE_SPARK_IMAGE
work="$SPARKMERGE_CACHE/image"
rootfs="$SPARKMERGE_CACHE/rootfs"
suite=bookworm
packages=(openjdk-17-jre-headless procps bash)
label=io.sparkmerge.inputs
formats_label=io.sparkmerge.table-formats

# The entrypoint, shared with scripts/spark-local.sh: the server's settings.
entrypoint_script="$SPARKMERGE_REPO/scripts/start-connect.sh"

self_hash=$(cat "${BASH_SOURCE[0]}" "$entrypoint_script" | sha256sum | cut -c1-16)
base_hash=$(printf '%s\n' "$suite" "${packages[@]}" "$(dpkg --print-architecture 2>/dev/null || uname -m)" | sha256sum | cut -c1-16)
inputs_hash=$(printf '%s\n' "$self_hash" "$base_hash" "$PYSPARK_SHA256" "$SPARK_CONNECT_JAR_SHA256" "$(table_format_pins)" | sha256sum | cut -c1-16)
base_tar="$work/base-$base_hash.tar"
image_tar="$work/spark-connect-$SPARK_VERSION-$inputs_hash.tar"

have_image() {
	[ "$(docker image inspect --format "{{ index .Config.Labels \"$label\" }}" "$image" 2>/dev/null)" = "$inputs_hash" ]
}

if have_image; then
	log "image $image is up to date (inputs $inputs_hash)"
	exit 0
fi

# One build at a time per cache directory; a second caller waits, then finds
# the image built.
mkdir -p "$work"
exec 9>"$work/.lock"
if ! flock -n 9; then
	log "another build-image.sh is running; waiting for it"
	flock 9
fi
if have_image; then
	log "image $image is up to date (inputs $inputs_hash)"
	exit 0
fi

# clean_rootfs: removes the work tree, first unmounting a /proc that an
# interrupted run may have left mounted.
clean_rootfs() {
	as_root umount "$rootfs/proc" 2>/dev/null || true
	as_root rm -rf --one-file-system "$rootfs"
}

# apt_mirror SUITE: the first Debian mirror URI this machine's apt uses for SUITE.
apt_mirror() {
	local want=$1 f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822: paragraphs with URIs: and Suites: lines.
		awk -v want="$want" '
			BEGIN { RS=""; FS="\n" }
			{
				uris=""; suites=""; types=""
				for (i = 1; i <= NF; i++) {
					if ($i ~ /^URIs:/)   { sub(/^URIs:[ \t]*/, "", $i); uris=$i }
					if ($i ~ /^Suites:/) { sub(/^Suites:[ \t]*/, "", $i); suites=" " $i " " }
					if ($i ~ /^Types:/)  { types=$i }
				}
				if (types ~ /deb( |$)/ && index(suites, " " want " ") > 0) { split(uris, u, " "); print u[1]; exit }
			}' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v want="$want" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i+1) == want) { print $i; exit } }' "$f"
	done
}

build_base() {
	local mirror security
	mirror=$(apt_mirror "$suite" | head -n1)
	[ -n "$mirror" ] || die "no apt source for $suite in /etc/apt/sources.list{,.d}: cannot pick a mirror for debootstrap"
	security=$(apt_mirror "$suite-security" | head -n1)
	command -v debootstrap >/dev/null || apt_install debootstrap

	log "debootstrap --variant=minbase $suite from $mirror into $rootfs"
	clean_rootfs
	as_root debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$work/debootstrap.log" >&2; die "debootstrap failed: see $work/debootstrap.log"; }

	{
		echo "deb $mirror $suite main"
		echo "deb $mirror $suite-updates main"
		[ -z "$security" ] || echo "deb $security $suite-security main"
	} | as_root tee "$rootfs/etc/apt/sources.list" >/dev/null
	as_root cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
	# Keep docs, man pages and locales out of the image.
	as_root tee "$rootfs/etc/dpkg/dpkg.cfg.d/01-sparkmerge-nodoc" >/dev/null <<'CFG'
path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
CFG

	as_root mount -t proc proc "$rootfs/proc"
	trap 'as_root umount "$rootfs/proc" 2>/dev/null || true' EXIT
	log "installing ${packages[*]} in the rootfs"
	as_root chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$work/debootstrap.log" 2>&1
	as_root chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >>"$work/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$work/debootstrap.log" >&2; die "apt-get install in the rootfs failed: see $work/debootstrap.log"; }
	as_root chroot "$rootfs" apt-get clean
	as_root umount "$rootfs/proc"
	trap - EXIT
	as_root rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/var/log/*.log \
		"$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/tmp/*
	: | as_root tee "$rootfs/etc/resolv.conf" >/dev/null

	as_root tar -C "$rootfs" -cf "$base_tar.tmp" .
	as_root mv "$base_tar.tmp" "$base_tar"
	log "base rootfs cached in $base_tar ($(du -h "$base_tar" | cut -f1))"
}

# The class archive: dumped from the image tarball's jars, whose sizes and
# times the JVM checks (it ignores an archive that does not match them),
# so cached beside it and made again when it is.
archive_path=/opt/sparkmerge/spark-connect.jsa
archive_label=io.sparkmerge.class-archive
archive_cache="${image_tar%.tar}.jsa"

build_image_tar() {
	local spark_home stage java_home formats
	rm -f "$archive_cache"
	spark_home=$("$SPARKMERGE_REPO/scripts/fetch-spark.sh")
	formats=$("$SPARKMERGE_REPO/scripts/fetch-table-formats.sh")
	[ -f "$base_tar" ] || build_base
	log "assembling $image_tar"
	clean_rootfs
	mkdir -p "$rootfs"
	as_root tar -C "$rootfs" -xf "$base_tar"
	as_root mkdir -p "$rootfs/opt/spark" "$rootfs/opt/sparkmerge"
	# Only what the server needs: no examples, data or python.
	as_root cp -a "$spark_home/bin" "$spark_home/sbin" "$spark_home/jars" "$spark_home/licenses" "$rootfs/opt/spark/"
	as_root chmod +x "$rootfs"/opt/spark/bin/* "$rootfs"/opt/spark/sbin/*
	# On Spark's classpath, for the driver and every executor; the server
	# turns them on only with their settings (start-connect.sh).
	[ -z "$formats" ] || as_root cp "$formats"/*.jar "$rootfs/opt/spark/jars/"
	as_root chown -R 0:0 "$rootfs/opt/spark"
	as_root cp "$entrypoint_script" "$rootfs/opt/sparkmerge/start-connect.sh"
	as_root chmod 755 "$rootfs/opt/sparkmerge/start-connect.sh"
	java_home=$(cd "$rootfs/usr/lib/jvm" && ls -d java-17-openjdk-* | head -n1)
	[ -n "$java_home" ] || die "no java-17 in the base rootfs: delete $base_tar and rerun"
	as_root ln -sfn "/usr/lib/jvm/$java_home" "$rootfs/opt/java"
	as_root tar -C "$rootfs" -cf "$image_tar.tmp" .
	as_root mv "$image_tar.tmp" "$image_tar"
	clean_rootfs
}

# dump_class_archive: starts the server on $image (no network, the
# entrypoint's settings) with -XX:ArchiveClassesAtExit, stops it once it is
# ready (the JVM writes the archive as it exits) and keeps the archive in
# $archive_cache. Fails, leaving no archive, if the server does not start
# within 10 minutes or the JVM wrote none.
dump_class_archive() {
	local dir ctr ready=0 deadline=$((SECONDS + 600))
	dir=$(mktemp -d "$work/class-archive.XXXXXX")
	chmod 777 "$dir"
	log "dumping the class archive of $image's server start"
	ctr=$(docker run -d --network none --hostname localhost --user 0 -v "$dir:/cds" "$image" \
		--conf "spark.driver.extraJavaOptions=-XX:ArchiveClassesAtExit=/cds/spark-connect.jsa") || { as_root rm -rf "$dir"; return 1; }
	while [ $SECONDS -lt $deadline ] && [ "$(docker inspect -f '{{.State.Running}}' "$ctr")" = true ]; do
		# grep reads the whole log (-c, not -q): under pipefail, an early exit
		# would fail docker logs with SIGPIPE and the test with it.
		if docker logs "$ctr" 2>&1 | grep -c 'Spark Connect server started' >/dev/null; then
			ready=1
			break
		fi
		sleep 1
	done
	docker stop -t 300 "$ctr" >/dev/null || true
	docker logs "$ctr" >"$work/class-archive.log" 2>&1 || true
	docker rm -f "$ctr" >/dev/null || true
	if [ "$ready" = 1 ] && [ -s "$dir/spark-connect.jsa" ]; then
		as_root mv "$dir/spark-connect.jsa" "$archive_cache"
	fi
	as_root rm -rf "$dir"
	[ -s "$archive_cache" ]
}

# add_class_archive: $image plus the class archive at $archive_path, named
# by $archive_label; without an archive, $image as it is.
add_class_archive() {
	local ctr
	if [ ! -s "$archive_cache" ] && ! dump_class_archive; then
		log "warning: no class archive for $image (see $work/class-archive.log): its servers load every class at each start"
		return 0
	fi
	ctr=$(docker create "$image")
	docker cp "$archive_cache" "$ctr:$archive_path" &&
		docker commit --change "LABEL $archive_label=$archive_path" "$ctr" "$image" >/dev/null ||
		log "warning: could not add the class archive to $image: its servers load every class at each start"
	docker rm "$ctr" >/dev/null
}

[ -f "$image_tar" ] || build_image_tar
old_id=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
log "docker import $image_tar as $image"
docker import \
	--change 'ENTRYPOINT ["/opt/sparkmerge/start-connect.sh"]' \
	--change 'ENV JAVA_HOME=/opt/java' \
	--change 'ENV SPARK_HOME=/opt/spark' \
	--change 'ENV PATH=/opt/spark/bin:/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	--change 'ENV SPARK_LOCAL_IP=127.0.0.1' \
	--change 'WORKDIR /opt/spark' \
	--change "LABEL $label=$inputs_hash" \
	--change "LABEL $formats_label=$SPARKMERGE_TABLE_FORMATS" \
	--change "LABEL org.opencontainers.image.version=$SPARK_VERSION" \
	--message "sparkmerge Spark Connect $SPARK_VERSION (scripts/build-image.sh)" \
	"$image_tar" "$image" >/dev/null
add_class_archive
# Keep only the newest image tarball and class archive of this version (and
# none of the unversioned name earlier builds used).
find "$work" -maxdepth 1 \( -name "spark-connect-$SPARK_VERSION-*.tar" -o -name "spark-connect-$SPARK_VERSION-*.jsa" -o -regex '.*/spark-connect-[0-9a-f]*\.tar' \) \
	! -name "$(basename "$image_tar")" ! -name "$(basename "$archive_cache")" -delete
have_image || die "docker import did not produce $image with label $label=$inputs_hash"
# Drop the outdated build this one replaced (kept if a container still uses it).
if [ -n "$old_id" ] && [ "$old_id" != "$(docker image inspect --format '{{.Id}}' "$image")" ]; then
	docker rmi "$old_id" >/dev/null 2>&1 || log "kept the previous image $old_id: it is still in use"
fi
log "image $image ready ($(docker image inspect --format '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1/1e6 }'))"
