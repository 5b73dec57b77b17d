/*
Copyright The miniapiserver Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package envtest_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// listAs lists resource in ns through cs's REST client and returns the
// HTTP status and the error.
func listAs(cs kubernetes.Interface, ns, resource string) (int, error) {
	var code int
	err := cs.CoreV1().RESTClient().Get().Namespace(ns).Resource(resource).Do(ctx).StatusCode(&code).Error()
	return code, err
}

var _ = Describe("A user added with AddUser", func() {
	It("may list configmaps where a RoleBinding lets it, and nothing else", func() {
		allowed, other := newNamespace("rbac-allowed"), newNamespace("rbac-other")

		By("granting list configmaps in " + allowed)
		Expect(k8sClient.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: allowed, Name: "configmap-lister"},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"},
			}},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: allowed, Name: "alice-lists-configmaps"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmap-lister"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"}},
		})).To(Succeed())

		user, err := testEnv.AddUser(envtest.User{Name: "alice", Groups: []string{"example:devs"}}, cfg)
		Expect(err).NotTo(HaveOccurred())
		cs, err := kubernetes.NewForConfig(user.Config())
		Expect(err).NotTo(HaveOccurred())

		By("listing configmaps in " + allowed + " once the authorizer has the binding")
		Eventually(func(g Gomega) {
			code, err := listAs(cs, allowed, "configmaps")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK))
		}).Should(Succeed())

		By("being forbidden configmaps in " + other)
		code, err := listAs(cs, other, "configmaps")
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
		Expect(code).To(Equal(http.StatusForbidden))
		Expect(err.Error()).To(Equal(`configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "` + other + `"`))

		By("being forbidden secrets in " + allowed)
		code, err = listAs(cs, allowed, "secrets")
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
		Expect(code).To(Equal(http.StatusForbidden))

		By("being forbidden to get a configmap, a verb the Role does not grant")
		_, err = cs.CoreV1().ConfigMaps(allowed).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	})
})
