{{/*
What the code says about each service, kept here rather than in values because it is not a
choice: the port its settings default to, whether it consumes a group, whether it keeps an
embedded vector shard, whether it reads ServiceSettings (Kafka, MongoDB, the internal token)
and which secret keys it reads. tests/unit/deploy/test_helm_chart.py checks it against the code.
*/}}
{{- define "engram.catalog" -}}
gateway:
  port: 8080
  platform: true
  consumer: true
  public: true
  secretKeys: []
ingest:
  port: 8081
  platform: true
  consumer: true
  internalFrom: [gateway]
  secretKeys: []
extraction:
  port: 8082
  platform: true
  consumer: true
  internalFrom: [gateway]
  secretKeys: [ENGRAM_EXTRACTION_LLM_API_KEY]
embedding:
  port: 8083
  platform: true
  consumer: true
  internalFrom: []
  secretKeys: []
memory:
  port: 8084
  platform: true
  consumer: true
  embeddedVectors: true
  internalFrom: [gateway]
  secretKeys: [ENGRAM_MEMORY_LLM_API_KEY, QDRANT_API_KEY]
enrichment:
  port: 8085
  platform: true
  consumer: true
  embeddedVectors: true
  internalFrom: [gateway]
  secretKeys: [ENGRAM_ENRICHMENT_SUMMARY_API_KEY, QDRANT_API_KEY]
connectors:
  port: 8086
  platform: true
  consumer: false
  internalFrom: []
  secretKeys: []
mcp:
  port: 8087
  platform: false
  consumer: false
  public: true
  secretKeys: []
{{- end -}}

{{- define "engram.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* A service's resource name: <fullname>-<service>. Call with (list $ "memory"). */}}
{{- define "engram.name" -}}
{{- printf "%s-%s" (include "engram.fullname" (index . 0)) (index . 1) -}}
{{- end -}}

{{- define "engram.selectorLabels" -}}
app.kubernetes.io/name: {{ (index . 0).Chart.Name }}
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "engram.labels" -}}
{{ include "engram.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" (index . 0).Chart.Name (index . 0).Chart.Version }}
app.kubernetes.io/managed-by: {{ (index . 0).Release.Service }}
app.kubernetes.io/part-of: engram
{{- end -}}

{{/* Where the Kafka CA (and client certificate) Secret is mounted in every platform pod. */}}
{{- define "engram.kafkaTlsDir" -}}
/etc/engram/kafka-tls
{{- end -}}

{{- define "engram.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "engram.fullname" .)) -}}
{{- end -}}

{{/* The consumer group the code derives: <topic prefix>engram-<service>. */}}
{{- define "engram.consumerGroup" -}}
{{- printf "%sengram-%s" (index . 0).Values.topicPrefix (index . 1) -}}
{{- end -}}

{{/* Whether a service runs several processes at once (replicas, an HPA or KEDA). */}}
{{- define "engram.scalesOut" -}}
{{- $root := index . 0 -}}
{{- $values := index . 2 -}}
{{- if or (gt (int $values.replicas) 1) (and $values.autoscaling $values.autoscaling.enabled) (and $root.Values.keda.enabled $values.keda) -}}
true
{{- end -}}
{{- end -}}

{{/*
Checks that stop rendering with a message, run once from the ConfigMap template.
An embedded vector shard is one process's directory: two replicas would each open their own
empty one (or fight over one volume), so recall would answer from a fraction of the memories.
*/}}
{{- define "engram.validate" -}}
{{- $catalog := include "engram.catalog" . | fromYaml -}}
{{- range $name, $values := .Values.services -}}
{{- if not (hasKey $catalog $name) -}}
{{- fail (printf "services.%s: no such Engram service (known: %s)" $name (keys $catalog | sortAlpha | join ", ")) -}}
{{- end -}}
{{- $facts := index $catalog $name -}}
{{- if and $values.enabled $facts.embeddedVectors (not $.Values.qdrant.url) (include "engram.scalesOut" (list $ $name $values)) -}}
{{- fail (printf "services.%s: more than one replica (or autoscaling) needs qdrant.url: without it %s keeps an embedded vector shard that only one process can open" $name $name) -}}
{{- end -}}
{{- range $key, $_ := $values.env -}}
{{- if regexMatch "(?i)(TOKEN|API_KEY|PASSWORD|SECRET|MONGODB_URI)" $key -}}
{{- fail (printf "services.%s.env.%s looks like a secret: ConfigMaps are readable by anyone who can read the namespace's config; set it in the Secret (secrets.* or secrets.existingSecret)" $name $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (not .Values.secrets.existingSecret) (not .Values.secrets.mongodbUri) -}}
{{- fail "secrets.mongodbUri (or secrets.existingSecret with MONGODB_URI) is required" -}}
{{- end -}}
{{- include "engram.validateKafka" . -}}
{{- if and .Values.kafka.topics.strimzi.enabled (not .Values.kafka.topics.strimzi.cluster) -}}
{{- fail "kafka.topics.strimzi.cluster: name the Strimzi Kafka resource the topics belong to" -}}
{{- end -}}
{{- end -}}

{{/*
The Kafka security combinations the services refuse at start (engram_platform.settings), refused
here first so a bad upgrade never rolls pods that cannot connect.
*/}}
{{- define "engram.validateKafka" -}}
{{- $kafka := .Values.kafka -}}
{{- $protocol := $kafka.securityProtocol -}}
{{- if not (has $protocol (list "PLAINTEXT" "SSL" "SASL_PLAINTEXT" "SASL_SSL")) -}}
{{- fail (printf "kafka.securityProtocol %q: one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL" $protocol) -}}
{{- end -}}
{{- with $kafka.sasl.mechanism -}}
{{- if not (has . (list "PLAIN" "SCRAM-SHA-256" "SCRAM-SHA-512")) -}}
{{- fail (printf "kafka.sasl.mechanism %q: one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512" .) -}}
{{- end -}}
{{- end -}}
{{- if hasPrefix "SASL_" $protocol -}}
{{- if not (and $kafka.sasl.mechanism $kafka.sasl.username) -}}
{{- fail (printf "kafka.securityProtocol %s needs kafka.sasl.mechanism and kafka.sasl.username (KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME)" $protocol) -}}
{{- end -}}
{{- if not (or .Values.secrets.existingSecret .Values.secrets.kafkaSaslPassword) -}}
{{- fail (printf "kafka.securityProtocol %s needs secrets.kafkaSaslPassword (or secrets.existingSecret with KAFKA_SASL_PASSWORD)" $protocol) -}}
{{- end -}}
{{- else if or $kafka.sasl.mechanism $kafka.sasl.username .Values.secrets.kafkaSaslPassword -}}
{{- fail (printf "kafka.sasl.* and secrets.kafkaSaslPassword need kafka.securityProtocol SASL_PLAINTEXT or SASL_SSL, not %s" $protocol) -}}
{{- end -}}
{{- if and $kafka.tls.existingSecret (not (has $protocol (list "SSL" "SASL_SSL"))) -}}
{{- fail (printf "kafka.tls.existingSecret needs kafka.securityProtocol SSL or SASL_SSL, not %s" $protocol) -}}
{{- end -}}
{{- if and $kafka.tls.clientCertificate (not $kafka.tls.existingSecret) -}}
{{- fail "kafka.tls.clientCertificate needs kafka.tls.existingSecret (the Secret holding tls.crt and tls.key)" -}}
{{- end -}}
{{- end -}}
