# benthos-paimon container image: `make image`, or
#   docker build --build-arg VERSION=v0.2.0 --build-arg COMMIT=$(git rev-parse --short=12 HEAD) .
# The build stage runs scripts/release.sh, the script `make release` runs,
# for linux on the target architecture; the image holds only the static
# binary on distroless/static (CA certificates, tzdata, a non-root user).

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# .git is not in the build context, so the stamps come in as arguments.
ARG VERSION=dev
ARG COMMIT=unknown
ARG DATE=unknown
ARG TARGETARCH=amd64
RUN VERSION="$VERSION" COMMIT="$COMMIT" DATE="$DATE" bash scripts/release.sh -o /out linux/$TARGETARCH

FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETARCH=amd64
COPY --from=build /out/benthos-paimon-linux-${TARGETARCH} /benthos-paimon
# uid 65532; mount a local warehouse writable by it (or use s3://).
USER nonroot:nonroot
# The Benthos HTTP server (/ready, /metrics with the prometheus exporter).
EXPOSE 4195
ENTRYPOINT ["/benthos-paimon"]
CMD ["-c", "/benthos.yaml"]
